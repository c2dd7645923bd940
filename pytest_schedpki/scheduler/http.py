"""PLACEHOLDER - replaced by the scheduler implementation."""

from werkzeug.wrappers import Request, Response


def error_response(exc):
    return Response(str(exc), status=500, content_type="text/plain; charset=utf-8")


def make_app(state):
    @Request.application
    def app(request):
        return Response("not implemented", status=501)

    return app
