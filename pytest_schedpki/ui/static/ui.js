// The schedpki double's state page: polls the JSON API (ETag: unchanged answers cost a 304) and
// draws tables with textContent only (no HTML is ever built from data). Actions call the control
// endpoints. The control token, when the double has one, comes from the URL's #token= fragment.
"use strict";
(function () {
  const prefix = document.body.dataset.prefix;
  const token = new URLSearchParams(location.hash.slice(1)).get("token") || "";
  const etags = {};
  const state = {tab: "secrets", certCursor: "", certNextCursor: null, secrets: null};
  const $ = (id) => document.getElementById(id);

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    if (token) h["X-Schedpki-Control-Token"] = token;
    return h;
  }

  async function getJSON(path, cacheKey) {
    const h = headers(cacheKey && etags[cacheKey] ? {"If-None-Match": etags[cacheKey].tag} : {});
    const response = await fetch(prefix + "/api/" + path, {headers: h, cache: "no-store"});
    if (response.status === 304) return null;
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    if (cacheKey) etags[cacheKey] = {tag: response.headers.get("ETag")};
    return body;
  }

  async function control(method, path, body) {
    const response = await fetch("/_schedpki/" + path, {
      method: method, headers: headers({"Content-Type": "application/json"}),
      body: body === undefined ? undefined : JSON.stringify(body)});
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(answer.error || response.statusText);
    return answer;
  }

  function say(text, isError) {
    const el = $("status");
    el.textContent = text;
    el.className = isError ? "error" : "";
  }

  function cellText(value) {
    if (value === null || value === undefined) return "";
    if (Array.isArray(value)) return value.map(cellText).join(", ");
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  }

  // rows: objects; columns: [key, label] or [fn, label]; extra(row, tr) may add cells or attributes
  function table(target, rows, columns, extra) {
    const el = typeof target === "string" ? $(target) : target;
    el.textContent = "";
    if (!rows || rows.length === 0) {
      const p = document.createElement("p");
      p.className = "empty";
      p.textContent = "none";
      el.appendChild(p);
      return;
    }
    const t = document.createElement("table");
    const head = t.createTHead().insertRow();
    for (const [, label] of columns) {
      const th = document.createElement("th");
      th.textContent = label;
      head.appendChild(th);
    }
    const body = t.createTBody();
    for (const row of rows) {
      const tr = body.insertRow();
      for (const [key, label] of columns) {
        const td = tr.insertCell();
        td.className = "col-" + label.replace(/\W+/g, "-").toLowerCase();
        td.textContent = cellText(typeof key === "function" ? key(row) : row[key]);
      }
      if (extra) extra(row, tr);
    }
    el.appendChild(t);
  }

  function button(label, onClick) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.addEventListener("click", onClick);
    return b;
  }

  function drawSecrets(s) {
    state.secrets = s;
    $("sealed").hidden = !s.sealed;
    table("mounts", s.mounts, [["path", "path"], ["kind", "kind"], ["type", "type"], ["description", "description"],
      ["accessor", "accessor"], ["default_lease_ttl", "default TTL (s)"], ["max_lease_ttl", "max TTL (s)"],
      ["options", "options"]]);
    const issuers = [], roles = [], acme = [];
    for (const m of s.pki) {
      for (const i of m.issuers) issuers.push(Object.assign({mount: m.mount}, i));
      for (const r of m.roles) roles.push(Object.assign({mount: m.mount}, r));
      if (m.acme) acme.push({mount: m.mount, acme: m.acme});
    }
    table("issuers", issuers, [["mount", "mount"], ["issuer_name", "name"], ["issuer_id", "id"],
      [(i) => i.default ? "default" : "", "default"], ["subject", "subject"], ["key", "key"],
      [(i) => i.has_key ? "yes" : "no", "has key"], ["usage", "usage"], ["not_before", "not before"],
      ["not_after", "not after"], [(i) => i.crl ? "#" + i.crl.number + ", " + i.crl.revoked + " revoked, next " +
        i.crl.next_update : "not built", "CRL"]]);
    table("pki-roles", roles, [["mount", "mount"], ["name", "name"], ["allowed_domains", "allowed domains"],
      ["allow_subdomains", "subdomains"], ["allow_any_name", "any name"], ["key_type", "key type"],
      ["ttl", "ttl (s)"], ["max_ttl", "max ttl (s)"], ["no_store", "no store"]]);
    // ACME accounts and orders: drawn when the ACME server's hook (secrets_views.acme_view) returns them
    $("acme").textContent = acme.length ? "" : "";
    if (acme.length) {
      const h = document.createElement("h2");
      h.textContent = "ACME";
      $("acme").appendChild(h);
      const pre = document.createElement("pre");
      pre.textContent = JSON.stringify(acme, null, 2);
      $("acme").appendChild(pre);
    }
    const keys = [];
    for (const m of s.kv) {
      for (const k of m.keys) {
        if (m.version === 1) keys.push({mount: m.mount, path: k.path, version: 0, kv: 1, state: ""});
        for (const v of k.versions) {
          keys.push({mount: m.mount, path: k.path, version: v.version, kv: 2, current: v.version === k.current_version,
            state: v.destroyed ? "destroyed" : v.deleted ? "deleted" : "", created: v.created});
        }
      }
    }
    table("kv", keys, [["mount", "mount"], ["path", "path"], [(k) => k.kv === 1 ? "" : k.version + (k.current ? " (current)" : ""),
      "version"], ["created", "created"], ["state", "state"]], (k, tr) => {
      const td = tr.insertCell();
      if (!k.state) td.appendChild(button("show value", () => showKv(k)));
    });
    table("secrets-tokens", s.tokens, [["accessor", "accessor"], ["display_name", "name"], ["policies", "policies"],
      ["ttl", "ttl left (s)"], ["expire_time", "expires"], ["creation_time", "created"], ["renewable", "renewable"],
      ["orphan", "orphan"], ["num_uses", "uses left"], ["path", "path"]]);
    const approles = [];
    for (const m of s.approle) for (const r of m.roles) approles.push(Object.assign({mount: m.mount}, r));
    table("approle", approles, [["mount", "mount"], ["name", "role"], ["token_policies", "policies"],
      ["token_ttl", "token ttl (s)"], ["token_max_ttl", "token max ttl (s)"], ["bind_secret_id", "secret id"],
      [(r) => r.secret_id_accessors.length, "secret ids"], ["secret_id_accessors", "secret id accessors"]]);
    const select = $("cert-mount");
    const mounts = s.pki.map((m) => m.mount);
    if (select.options.length !== mounts.length || mounts.some((m, i) => select.options[i].value !== m)) {
      const chosen = select.value;
      select.textContent = "";
      for (const m of mounts) select.add(new Option(m, m, false, m === chosen));
    }
  }

  async function showKv(k) {
    const q = new URLSearchParams({mount: k.mount, path: k.path, version: k.version});
    try {
      const answer = await getJSON("kv/value?" + q);
      const pre = $("kv-value");
      pre.hidden = false;
      pre.textContent = k.mount + "/" + k.path + (k.version ? " v" + k.version : "") + "\n" +
        JSON.stringify(answer.value, null, 2);
      pre.appendChild(button("hide", () => { pre.textContent = ""; pre.hidden = true; }));
    } catch (e) { say(e.message, true); }
  }

  function certQuery(cursor) {
    return new URLSearchParams({mount: $("cert-mount").value, q: $("cert-q").value, serial: $("cert-serial").value,
      role: $("cert-role").value, status: $("cert-status").value, sort: $("cert-sort").value, cursor: cursor || ""});
  }

  function drawCerts(page) {
    state.certNextCursor = page.next;
    $("cert-next").disabled = !page.next;
    $("cert-summary").textContent = page.total + " certificate(s) on " + page.mount + "; showing " + page.items.length +
      (page.scan_stopped ? " (text search paused after its budget: next page goes on)" : "");
    table("certs", page.items, [["serial", "serial"], ["common_name", "common name"], ["sans", "SANs"],
      ["issuer", "issuer"], ["not_before", "not before"], ["not_after", "not after"], ["role", "role"], ["key", "key"],
      [(c) => (c.revoked ? "revoked" : c.expired ? "expired" : "valid") + (c.stored ? "" : " (not stored)"), "status"],
      [(c) => c.revocation_time ? c.revocation_time.slice(0, 19) + "Z" : "", "revoked at"]], (c, tr) => {
      tr.dataset.serial = c.serial;
      tr.className = c.revoked ? "revoked" : "";
      tr.insertCell().appendChild(button("PEM", () => showPem(page.mount, c.serial)));
    });
  }

  async function showPem(mount, serial) {
    try {
      const answer = await getJSON("certs/pem?" + new URLSearchParams({mount: mount, serial: serial}));
      const pre = $("cert-pem");
      pre.hidden = false;
      pre.textContent = answer.pem;
    } catch (e) { say(e.message, true); }
  }

  function drawScheduler(s) {
    const r = s.replication;
    table("replication", [r], [["authoritative_region", "authoritative region"], ["region", "local region"],
      [(x) => x.authoritative.table_index, "authoritative index"], [(x) => x.local.table_index, "local index"],
      [(x) => x.authoritative.table_index - x.local.table_index, "index lag"], [(x) => x.local.pending, "pending writes"],
      [(x) => x.lag.seconds, "lag (s)"], [(x) => x.lag.after_reads, "lag (reads)"],
      [(x) => x.lag.paused ? "paused" : "running", "replication"], [(x) => x.lag.leader, "leader"]]);
    table("auth-methods", s.auth_methods, [["Name", "name"], ["Type", "type"], ["TokenLocality", "locality"],
      ["MaxTokenTTL", "max token TTL"], ["Default", "default"], ["Config", "config"], ["ModifyIndex", "index"]]);
    table("binding-rules", s.binding_rules, [["ID", "id"], ["AuthMethod", "auth method"], ["Selector", "selector"],
      ["BindType", "bind type"], ["BindName", "bind name"], ["Description", "description"]]);
    table("policies", s.policies, [["Name", "name"], ["Description", "description"], ["Rules", "rules"]]);
    table("acl-roles", s.roles, [["Name", "name"], ["ID", "id"], [(x) => x.Policies.map((p) => p.Name), "policies"]]);
    table("acl-tokens", s.tokens, [["AccessorID", "accessor"], ["Name", "name"], ["Type", "type"],
      ["Policies", "policies"], [(t) => (t.Roles || []).map((x) => x.Name), "roles"], ["Global", "global"],
      ["ExpirationTime", "expires"], ["ExpirationTTL", "TTL"]]);
  }

  function drawDouble(d) {
    $("clock-now").textContent = d.clock.now;
    $("clock-mode").textContent = "(" + d.clock.mode + ")";
    const j = d.journal;
    $("journal-summary").textContent = j.error ? j.error : "newest " + j.entries.length + " of " + j.kept +
      " kept (" + j.evicted + " evicted)";
    table("journal", j.entries, [["time", "time"], ["service", "service"], ["method", "method"], ["path", "path"],
      ["status", "status"], ["duration_ms", "ms"], ["token_kind", "token"]], (e, tr) => {
      tr.insertCell().appendChild(button("bodies", () => {
        const pre = $("journal-detail");
        pre.hidden = false;
        pre.textContent = e.method + " " + e.path + "\nquery: " + JSON.stringify(e.query) + "\nrequest: " +
          JSON.stringify(e.body, null, 2) + "\nresponse: " + JSON.stringify(e.response, null, 2);
      }));
    });
    table("faults", d.faults, [["service", "service"], ["method", "method"], ["path", "path"], ["status", "status"],
      ["latency", "latency"], ["times", "times"], ["hits", "hits"], ["matched", "matched"], ["exhausted", "exhausted"]]);
    table("seeds", d.seeds.map((s) => ({seed: s})), [["seed", "seed"]]);
  }

  const views = {
    secrets: () => getJSON("secrets", "secrets").then((s) => s && drawSecrets(s)),
    certs: async () => {
      if (!state.secrets) await views.secrets();
      if (!$("cert-mount").value) { $("certs").textContent = "no PKI mount"; return; }
      const page = await getJSON("certs?" + certQuery(state.certCursor), "certs");
      if (page) drawCerts(page);
    },
    scheduler: () => getJSON("scheduler", "scheduler").then((s) => s && drawScheduler(s)),
  };

  async function poll() {
    try {
      const filters = new URLSearchParams({service: $("journal-service").value, path: $("journal-path").value,
        status: $("journal-status").value});
      const d = await getJSON("double?" + filters, "double");
      if (d) drawDouble(d);
      if (views[state.tab]) await views[state.tab]();
      if ($("status").className === "error" && $("status").dataset.sticky !== "1") say("");
    } catch (e) { say(e.message, true); }
  }

  function refresh() { for (const k of Object.keys(etags)) delete etags[k]; poll(); }

  function show(tab) {
    state.tab = tab;
    for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "view-" + tab;
    for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.tab === tab);
    refresh();
  }

  function act(fn, done) {
    return async (event) => {
      if (event) event.preventDefault();
      try { await fn(); say(done); } catch (e) { say(e.message, true); }
      refresh();
    };
  }

  document.addEventListener("DOMContentLoaded", () => {
    for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => show(b.dataset.tab));
    $("reset").addEventListener("click", act(() => control("POST", "reset"), "reset to the baseline"));
    $("clock-advance-hour").addEventListener("click", act(() => control("POST", "clock", {advance: 3600}), "clock +1h"));
    $("clock-advance-day").addEventListener("click", act(() => control("POST", "clock", {advance: 86400}), "clock +1d"));
    $("clock-set-button").addEventListener("click", act(() => control("POST", "clock", {mode: "manual", now: $("clock-set").value}),
      "clock set"));
    $("clock-follow").addEventListener("click", act(() => control("POST", "clock", {mode: "follow"}), "clock follows"));
    $("replication-pause").addEventListener("click", act(() => control("POST", "lag", {paused: true}), "replication paused"));
    $("replication-resume").addEventListener("click", act(() => control("POST", "sync"), "replication resumed"));
    $("fault-form").addEventListener("submit", act(() => {
      const fault = {service: $("fault-service").value, path: $("fault-path").value || "*"};
      if ($("fault-method").value) fault.method = $("fault-method").value.toUpperCase();
      if ($("fault-status").value) fault.status = Number($("fault-status").value);
      if ($("fault-latency").value) fault.latency = Number($("fault-latency").value);
      if ($("fault-times").value) fault.times = Number($("fault-times").value);
      return control("POST", "faults", fault);
    }, "fault added"));
    $("fault-clear").addEventListener("click", act(() => control("DELETE", "faults"), "faults cleared"));
    for (const id of ["cert-q", "cert-serial", "cert-role", "cert-status", "cert-sort", "cert-mount"]) {
      $(id).addEventListener("input", () => { state.certCursor = ""; refresh(); });
    }
    for (const id of ["journal-service", "journal-path", "journal-status"]) $(id).addEventListener("input", refresh);
    for (const f of document.querySelectorAll("form")) f.addEventListener("submit", (e) => e.preventDefault());
    $("cert-first").addEventListener("click", () => { state.certCursor = ""; refresh(); });
    $("cert-next").addEventListener("click", () => { state.certCursor = state.certNextCursor || ""; refresh(); });
    const fromHash = () => (location.hash.match(/tab=(\w+)/) || [null, "secrets"])[1];
    window.addEventListener("hashchange", () => show(fromHash()));
    show(fromHash());
    setInterval(poll, 1000);
  });
})();
