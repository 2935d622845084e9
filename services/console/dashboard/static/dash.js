// Benchwarmers dashboard: forms post JSON (the guard takes only JSON, which no cross-site form can send),
// the verdict dialog opens once its seat is loaded, and open pages refresh their live parts when the bus
// says something changed (Server-Sent Events from /ui/live; nothing polls).
(function () {
  "use strict";
  htmx.defineExtension("json-form", {
    onEvent: function (name, evt) {
      if (name === "htmx:configRequest") { evt.detail.headers["Content-Type"] = "application/json"; }
    },
    encodeParameters: function (xhr, parameters) {
      xhr.overrideMimeType("text/json");
      var out = {};
      parameters.forEach(function (value, key) {
        if (Object.prototype.hasOwnProperty.call(out, key)) { out[key] = [].concat(out[key], value); }
        else { out[key] = value; }
      });
      return JSON.stringify(out);
    }
  });

  document.body.addEventListener("htmx:afterSwap", function (evt) {
    if (evt.detail.target && evt.detail.target.id === "verdict-body") {
      var shown = document.getElementById("verdict");
      if (!shown.open) { shown.showModal(); }
    }
  });

  // "Action needed" folded for 12 h in this browser, or until an alert it did not hold when folded (H-D4).
  var FOLD_KEY = "bench-action-fold";
  var FOLD_MS = 12 * 3600 * 1000;
  function savedFold() {
    try { return JSON.parse(window.localStorage.getItem(FOLD_KEY) || "null"); } catch (e) { return null; }
  }
  function alertsShown() {
    var section = document.getElementById("live-actions");
    return section ? (section.dataset.alerts || "").split(" ").filter(Boolean) : [];
  }
  function applyFold() {
    var section = document.getElementById("live-actions");
    if (!section) { return; }
    var fold = savedFold();
    var folded = !!fold && Date.now() < fold.until && alertsShown().every(function (key) {
      return fold.keys.indexOf(key) >= 0;
    });
    section.classList.toggle("folded", folded);
    var note = section.querySelector(".folded-note");
    if (note) {
      note.hidden = !folded;
      if (folded) { note.querySelector(".until").textContent = new Date(fold.until).toLocaleString(); }
    }
  }
  document.body.addEventListener("click", function (evt) {
    var button = evt.target.closest && evt.target.closest("button.fold, button.unfold");
    if (!button) { return; }
    if (button.classList.contains("fold")) {
      window.localStorage.setItem(FOLD_KEY, JSON.stringify({until: Date.now() + FOLD_MS, keys: alertsShown()}));
    } else {
      window.localStorage.removeItem(FOLD_KEY);
    }
    applyFold();
  });
  document.body.addEventListener("htmx:afterSettle", applyFold);
  applyFold();

  var dialog = document.getElementById("verdict");
  if (dialog) {  // what changed while the dialog was open is shown once it closes
    dialog.addEventListener("close", function () { htmx.trigger(document.body, "bench-changed"); });
  }

  var login = document.getElementById("login");
  if (login) {
    login.addEventListener("submit", function (evt) {
      evt.preventDefault();
      var token = document.getElementById("login-token").value;
      fetch("/login", {method: "POST", headers: {"Content-Type": "application/json"},
                       body: JSON.stringify({token: token})})
        .then(function (reply) {
          if (reply.ok) { location.href = "/"; return null; }
          return reply.json().then(function (body) {
            document.getElementById("login-error").textContent = body.errors[0];
            document.getElementById("login-token").setAttribute("aria-invalid", "true");
          });
        });
    });
  }

  if (document.body.dataset.live === "on" && window.EventSource) {
    var timer = null;
    var seq = document.body.dataset.seq;  // where the stream stood when this page was read
    var source = new EventSource("/ui/live" + (seq ? "?since=" + encodeURIComponent(seq) : ""));
    // At most one refresh a second however busy the bus is (a burst of seat events is one refresh).
    source.addEventListener("change", function (evt) {
      document.body.dataset.lastChange = evt.data;
      if (timer !== null) { return; }
      timer = setTimeout(function () {
        timer = null;
        if (!dialog.open) { htmx.trigger(document.body, "bench-changed"); }
      }, 1000);
    });
    window.addEventListener("beforeunload", function () { source.close(); });
  }
})();
