"""HCL1, the configuration language both upstreams write ACL policies in (``github.com/hashicorp/hcl``
v1): the parser shared by the two services' policy decoders.

* ``hcl1`` - scanner and parser of the HCL syntax into a small tree (``ObjectList``, ``ObjectItem``,
  ``ListNode``, ``Literal``) with HCL1's error texts and ``At line:col`` positions;
* ``hcl1_json`` - the JSON form of the same tree (a text starting with ``{``), flattened as HCL1 does;
  ``hcl1_json_go`` - HCL1's own lax JSON scanner and parser, token by token (``nomad=True``).

The secrets side (``secrets.policy_parser``, OpenBao's policy rules) and the scheduler
(``scheduler.acl.policy``, Nomad's) decode this tree each with their own rules. Where the forks of the
library the two upstreams build with differ, the parser takes an option (``hcl1.parse(text,
nomad=True)``) and the secrets side keeps the default.

May import: the standard library and ``golang/`` only. Both services import it; it imports neither.
"""
