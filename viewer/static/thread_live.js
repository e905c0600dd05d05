// convtrace viewer: the live tail of a thread page; does nothing elsewhere.
// The page follows its thread's change feed (events.js) and, when the
// thread is updated, asks for the cards it lacks (calls that started
// since, and the running ones, which may have ended) and puts them in
// place: no reload, the scroll position kept. Without the feed, while a
// call of the thread runs or the thread was updated lately, it asks every
// two seconds, and stops once nothing ran for a minute.
"use strict";
(() => {
  const calls = document.getElementById("calls");
  const status = document.querySelector(".live-status");
  if (!calls || !status) {
    return;
  }
  const every = 2000;
  const idleStops = 30; // polls without news or a running call
  let last = calls.dataset.last;
  let idle = 0;
  let timer = 0;

  // running are the span ids of the cards shown running.
  const running = () =>
    [...calls.querySelectorAll("article.call.call-running")]
      .map((card) => card.dataset.call)
      .filter((id) => id.startsWith("call-"))
      .map((id) => id.slice("call-".length));

  function element(tag, className, attrs) {
    const el = document.createElement(tag);
    el.className = className;
    for (const [name, value] of Object.entries(attrs)) {
      el.dataset[name] = value;
    }
    return el;
  }

  // box is where a new card of a phase and round goes: the last band of
  // the timeline when it is of that phase and round, else a new band; by
  // phase, the round of its phase, made when missing.
  function box(card) {
    const round = String(card.round);
    if (calls.dataset.view === "timeline") {
      const band = calls.lastElementChild;
      if (band && band.dataset.phase === card.phase && band.dataset.round === round) {
        return band;
      }
      const added = element("section", "band", { phase: card.phase, round });
      const head = element("h2", "band-head", {});
      head.textContent = card.phase_name + (card.round ? ` · round ${card.round}` : "");
      added.append(head);
      calls.append(added);
      return added;
    }
    let phase = [...calls.querySelectorAll("section.phase")].find((s) => s.dataset.phase === card.phase);
    if (!phase) {
      phase = element("section", "phase", { phase: card.phase });
      const head = document.createElement("h2");
      head.textContent = card.phase_name;
      phase.append(head);
      calls.append(phase);
    }
    let roundBox = [...phase.querySelectorAll("div.round")].find((r) => r.dataset.round === round);
    if (!roundBox) {
      roundBox = element("div", "round", { round });
      const head = document.createElement("h3");
      head.textContent = `Round ${card.round}`;
      roundBox.append(head);
      phase.append(roundBox);
    }
    return roundBox;
  }

  // outlined adds a new card to the outline, under its phase (added at
  // the end when new).
  function outlined(card, el) {
    const outline = document.querySelector("nav.outline details > ol");
    if (!outline) {
      return;
    }
    let phase = [...outline.children].find((li) => li.dataset.phase === card.phase);
    if (!phase) {
      phase = document.createElement("li");
      phase.dataset.phase = card.phase;
      const head = document.createElement("a");
      head.href = `#${card.id}`;
      head.textContent = card.phase_name;
      phase.append(head, document.createElement("ol"));
      outline.append(phase);
    }
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = `#${card.id}`;
    link.className = "outline-call";
    link.textContent = el.querySelector(".call-head .speaker").textContent;
    item.append(link);
    phase.querySelector("ol").append(item);
  }

  // counted shows in the thread's summary how many calls run.
  function counted() {
    const n = calls.querySelectorAll("article.call.call-running").length;
    let pill = document.querySelector(".summary .pill.running");
    if (!pill && n > 0) {
      pill = document.createElement("span");
      pill.className = "pill running";
      document.querySelector(".summary").append(" ", pill);
    }
    if (pill) {
      pill.textContent = `${n} running`;
      pill.hidden = n === 0;
    }
  }

  function place(card) {
    const tpl = document.createElement("template");
    tpl.innerHTML = card.html;
    const el = tpl.content.querySelector("article.call");
    const shown = document.getElementById(card.id);
    if (shown) {
      el.classList.toggle("folded", shown.classList.contains("folded"));
      shown.replaceWith(el);
    } else {
      box(card).append(el);
      outlined(card, el);
    }
  }

  let following = false; // the feed is open: no polling

  async function poll() {
    timer = 0;
    if (document.hidden && !following) {
      schedule();
      return;
    }
    const ids = running();
    const params = new URLSearchParams(window.location.search);
    params.set("after", last);
    params.set("running", ids.join(","));
    try {
      const res = await convtrace.getJSON(`${calls.dataset.liveUrl}?${params}`);
      res.cards.forEach(place);
      counted();
      last = res.last_ns;
      idle = res.cards.length === 0 && ids.length === 0 ? idle + 1 : 0;
      status.textContent = `live · ${new Date().toLocaleTimeString()}`;
    } catch (err) {
      status.textContent = `live: ${err.message}`;
    }
    if (following) {
      return;
    }
    if (idle < idleStops) {
      schedule();
    } else {
      status.textContent = "";
    }
  }

  function schedule() {
    if (!timer) {
      timer = setTimeout(poll, every);
    }
  }

  // One fetch at a time; an event during one fetches again after it.
  let fetching = null;
  let again = false;
  const update = async () => {
    if (fetching) {
      again = true;
      return;
    }
    do {
      again = false;
      fetching = poll();
      await fetching;
      fetching = null;
    } while (again);
  };
  const id = decodeURIComponent(calls.dataset.liveUrl.replace(/^\/threads\//, "").replace(/\/live$/, ""));
  following = true;
  window.convtrace.follow(id, (type) => {
    if (type === "updated" || type === "created" || type === "reset") {
      update();
    }
  }, () => {
    following = false;
    if (status.dataset.live) {
      status.textContent = "live";
      schedule();
    }
  });
  if (following) {
    status.textContent = "live";
  }
})();
