// convtrace viewer: the detail pane, on every page. Any element with a
// data-detail attribute (the URL of a span's detail fragment) opens the
// pane on click or Enter, without leaving the page; Escape or the close
// button closes it. The page's URL follows: ?span=ID when the element has
// data-span (the trace page, whose server renders the pane for it), else
// #detail=URL, which this script reopens on load. A page without a
// #detail-pane gets one floating at the right.
"use strict";
(() => {
  // Only a span's detail fragment is ever loaded from the URL's hash.
  const fragmentPath = /^\/traces\/[^?#/]+\/spans\/[^?#/]+\/detail(\?all=1)?$/;
  const interactive = "a, button, summary, input, select, textarea, label";
  let pane = document.getElementById("detail-pane");
  let opener = null;
  let loading = 0; // the newest request; older answers are dropped

  const ensurePane = () => {
    if (!pane) {
      pane = document.createElement("aside");
      pane.id = "detail-pane";
      pane.className = "detail-pane detail-floating";
      pane.setAttribute("aria-label", "detail");
      pane.tabIndex = -1;
      pane.hidden = true;
      document.body.append(pane);
    }
    return pane;
  };

  const markCurrent = (el) => {
    for (const e of document.querySelectorAll("[data-detail][aria-current]")) {
      e.removeAttribute("aria-current");
    }
    if (el && !pane.contains(el)) {
      el.setAttribute("aria-current", "true");
    }
  };

  // openerOf is the element a detail belongs to: the one clicked, or for a
  // link inside the pane (the parent span, "show all") the page's element
  // of that span, else the one that opened the pane.
  const openerOf = (url, el) => {
    if (!el || !pane.contains(el)) {
      return el;
    }
    const base = url.replace(/\?all=1$/, "");
    const own = [...document.querySelectorAll("[data-detail]")].find((e) => !pane.contains(e) && e.dataset.detail === base);
    return own || opener;
  };

  const syncURL = (url, el) => {
    const u = new URL(location.href);
    if (u.hash.startsWith("#detail")) {
      u.hash = "";
    }
    if (url === null) {
      u.searchParams.delete("span");
      u.searchParams.delete("all");
    } else if (el && el.dataset.span !== undefined) {
      u.searchParams.set("span", el.dataset.span);
      if (url.endsWith("?all=1")) {
        u.searchParams.set("all", "1");
      } else {
        u.searchParams.delete("all");
      }
    } else {
      u.hash = "detail=" + encodeURIComponent(url);
    }
    history.replaceState(history.state, "", u);
  };

  // fetchFragment returns the fragment's HTML: the server answers a
  // missing or bad span with a fragment saying so, which shows as well.
  // Anything else (a network error, a refused token) becomes a message.
  const fetchFragment = async (url) => {
    try {
      const res = await fetch(url, { credentials: "same-origin" });
      const text = await res.text();
      if ((res.headers.get("Content-Type") || "").startsWith("text/html")) {
        return text;
      }
      return message(text.trim() || `GET ${url}: HTTP ${res.status}`);
    } catch (err) {
      return message(err.message);
    }
  };
  const message = (text) => {
    const p = document.createElement("p");
    p.className = "error-msg";
    p.textContent = text;
    return p.outerHTML;
  };

  const open = async (url, el) => {
    const p = ensurePane();
    const n = ++loading;
    p.setAttribute("aria-busy", "true");
    const html = await fetchFragment(url);
    if (n !== loading) {
      return;
    }
    p.removeAttribute("aria-busy");
    // The server's fragment: model text in it is escaped by html/template.
    p.innerHTML = html;
    p.hidden = false;
    opener = openerOf(url, el);
    markCurrent(opener);
    syncURL(url, el);
    p.focus({ preventScroll: true });
    const box = p.getBoundingClientRect();
    if (box.top >= window.innerHeight || box.bottom <= 0) {
      p.scrollIntoView({ block: "start" });
    }
  };

  const close = () => {
    if (!pane || pane.hidden) {
      return;
    }
    loading++;
    pane.hidden = true;
    pane.replaceChildren();
    markCurrent(null);
    syncURL(null, null);
    if (opener && opener.isConnected) {
      opener.focus({ preventScroll: true });
    }
    opener = null;
  };

  document.addEventListener("click", (ev) => {
    if (ev.target.closest("[data-detail-close]")) {
      ev.preventDefault();
      close();
      return;
    }
    const el = ev.target.closest("[data-detail]");
    if (!el || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) {
      return;
    }
    // A link or control inside the element does its own thing, and so
    // does a click that ends a text selection.
    const inner = ev.target.closest(interactive);
    if (inner && inner !== el && el.contains(inner)) {
      return;
    }
    if (!el.matches(interactive) && String(window.getSelection()) !== "") {
      return;
    }
    ev.preventDefault();
    open(el.dataset.detail, el);
  });

  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && pane && !pane.hidden) {
      ev.preventDefault();
      close();
      return;
    }
    // Links open on Enter by themselves (a click); other elements do here.
    const el = ev.target.closest && ev.target.closest("[data-detail]");
    if (ev.key === "Enter" && el === ev.target && !el.matches(interactive)) {
      ev.preventDefault();
      open(el.dataset.detail, el);
    }
  });

  // A pane the server rendered belongs to the element marked current; a
  // #detail= link reopens its pane.
  if (pane && !pane.hidden) {
    opener = document.querySelector("[data-detail][aria-current]");
  } else if (location.hash.startsWith("#detail=")) {
    let url = "";
    try {
      url = decodeURIComponent(location.hash.slice("#detail=".length));
    } catch (_) {
      url = "";
    }
    if (fragmentPath.test(url)) {
      const el = [...document.querySelectorAll("[data-detail]")].find((e) => e.dataset.detail === url);
      open(url, el || null);
    }
  }
})();
