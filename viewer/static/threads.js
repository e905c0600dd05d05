// convtrace viewer: script of the threads list and of the rename, archive
// and delete controls (the threadActions partial, also on a thread's page);
// does nothing where their elements are absent.
"use strict";
(() => {
  // The filter form works without script; with it, a choice applies at once.
  const filters = document.querySelector("form.threads-filters");
  if (filters) {
    for (const sel of filters.querySelectorAll("select")) {
      sel.addEventListener("change", () => filters.requestSubmit());
    }
    // The URL carries only the filters in use.
    filters.addEventListener("formdata", (e) => {
      for (const [name, value] of [...e.formData]) {
        if (value === "") {
          e.formData.delete(name);
        }
      }
    });
  }

  // Import: the file chosen is sent as it is to the import endpoint, and
  // what it stored (or why it was refused) shown beside the button.
  const importFile = document.querySelector("input.import-file");
  if (importFile) {
    const status = document.querySelector(".import-status");
    const say = (msg, failed) => {
      status.textContent = msg;
      status.classList.toggle("failed", Boolean(failed));
    };
    importFile.addEventListener("change", async () => {
      const file = importFile.files[0];
      if (!file) {
        return;
      }
      say("Importing " + file.name + "…");
      try {
        const res = await fetch("/api/import?name=" + encodeURIComponent(file.name), {
          method: "POST",
          credentials: "same-origin",
          headers: { "Content-Type": "application/json" },
          body: file,
        });
        const text = await res.text();
        let answer = {};
        try {
          answer = JSON.parse(text);
        } catch (_) {
          answer = { error: text.trim() };
        }
        if (!res.ok) {
          throw new Error(answer.error || `HTTP ${res.status}`);
        }
        const i = answer.imported;
        const k = answer.skipped;
        let msg = `Imported ${i.threads} threads, ${i.turns} turns, ${i.spans} spans, ${i.notes} notes; ` +
          `${k.turns} turns were already stored.`;
        if (answer.bad_line_count > 0) {
          msg += ` ${answer.bad_line_count} bad lines: ` +
            answer.bad_lines.slice(0, 5).map((b) => `line ${b.line}: ${b.reason}`).join("; ");
        }
        say(msg, answer.bad_line_count > 0);
      } catch (err) {
        say("Import failed: " + err.message, true);
      }
      importFile.value = "";
    });
  }

  const patch = (id, body) => window.convtrace.send("PATCH", "/api/threads/" + encodeURIComponent(id), body);

  // bindActions makes one thread's controls work.
  const bindActions = (box) => {
    const id = box.dataset.thread;
    const row = box.closest("tr.thread-row");
    const renameBtn = box.querySelector("button.rename");
    const form = box.querySelector("form.rename-form");
    const input = form.querySelector("input[name=title]");
    const archiveBtn = box.querySelector("button.archive");
    const deleteBtn = box.querySelector("button.delete");
    const status = box.querySelector(".action-status");
    const say = (msg, failed) => {
      status.textContent = msg;
      status.classList.toggle("failed", Boolean(failed));
    };

    // The title shown: the row's link in the list, the heading on the page.
    const showTitle = (title) => {
      if (row) {
        row.querySelector("a.thread-title").textContent = title;
        return;
      }
      const h1 = document.querySelector("h1");
      if (h1) {
        h1.textContent = title;
      }
      document.title = title + " · convtrace";
    };

    const closeForm = () => {
      form.hidden = true;
      renameBtn.hidden = false;
    };
    renameBtn.addEventListener("click", () => {
      form.hidden = false;
      renameBtn.hidden = true;
      say("");
      input.focus();
      input.select();
    });
    form.querySelector("button.cancel").addEventListener("click", closeForm);
    input.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        e.preventDefault();
        input.value = input.defaultValue;
        closeForm();
      }
    });
    // Enter in the input submits the form.
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        const th = await patch(id, { title: input.value });
        input.value = input.defaultValue = th.title;
        showTitle(th.title);
        closeForm();
        say("Renamed.");
      } catch (err) {
        say(err.message, true);
      }
    });

    archiveBtn.addEventListener("click", async () => {
      const archive = box.dataset.archived !== "true";
      try {
        const th = await patch(id, { archived: archive });
        box.dataset.archived = String(th.archived);
        if (row) {
          // The row no longer belongs to this list (active or archived).
          row.remove();
          return;
        }
        archiveBtn.textContent = th.archived ? "Restore" : "Archive";
        say(th.archived ? "Archived: hidden from the threads list." : "Restored.");
      } catch (err) {
        say(err.message, true);
      }
    });

    // Deleting asks first, naming the thread and what goes with it.
    deleteBtn.addEventListener("click", async () => {
      const { title, turns } = deleteBtn.dataset;
      const sure = window.confirm(`Delete the thread "${title}" (${id}) and its ${turns} turns, ` +
        "with their spans, notes and metadata? This cannot be undone.");
      if (!sure) {
        return;
      }
      say("Deleting…");
      try {
        const res = await window.convtrace.send("DELETE", "/api/threads/" + encodeURIComponent(id), { confirm: id });
        if (row) {
          row.remove();
          return;
        }
        say(`Deleted ${res.removed.turns} turns.`);
        window.location.assign("/");
      } catch (err) {
        say(err.message, true);
      }
    });
  };
  for (const box of document.querySelectorAll(".thread-actions")) {
    bindActions(box);
  }

  // Live: the list follows the change feed (events.js) and replaces the
  // rows of the threads that changed with the page's own rendering of
  // them; a new thread appears at the top of the newest page. Without the
  // feed, while a thread shown has a call running or was just updated (the
  // server marks the table data-live), it asks its JSON twin, with the
  // same filters, every two seconds what changed. The rows change in
  // place: no reload, and the view stays where it was.
  const live = document.querySelector("table.threads");
  if (live) {
    const indicator = document.querySelector(".live-indicator");
    const body = live.tBodies[0];
    const newestPage = !/[?&](before|after)=/.test(location.search);
    // As rowSignature in threads.go writes it.
    const signature = (t) => [t.turns, t.open_calls, t.failed_calls, t.running, t.tokens === null ? "" : t.tokens].join("/");
    const fetchOK = async (url, accept) => {
      const res = await fetch(url, { credentials: "same-origin", headers: { Accept: accept } });
      if (!res.ok) {
        throw new Error(`HTTP ${res.status}`);
      }
      return res;
    };

    // show puts the page's rows of the threads ids in place of the rows
    // shown, or at the top for a thread not shown; the actions cell of a
    // row shown stays, with whatever the user has open in it.
    const show = async (ids, dim) => {
      const page = await (await fetchOK(location.pathname + location.search, "text/html")).text();
      const doc = new DOMParser().parseFromString(page, "text/html");
      const fresh = [];
      for (const id of ids) {
        const next = doc.querySelector(`tr.thread-row[data-thread="${CSS.escape(id)}"]`);
        const row = body.querySelector(`tr.thread-row[data-thread="${CSS.escape(id)}"]`);
        if (row && dim) {
          row.classList.toggle("unmatched", !next);
        }
        if (!next) {
          continue;
        }
        if (!row) {
          fresh.push(document.importNode(next, true));
          continue;
        }
        for (let i = 0; i < row.cells.length - 1 && i < next.cells.length; i++) {
          row.cells[i].replaceWith(document.importNode(next.cells[i], true));
        }
        row.dataset.signature = next.dataset.signature;
        const del = row.querySelector("button.delete");
        const nextDel = next.querySelector("button.delete");
        if (del && nextDel) {
          del.dataset.turns = nextDel.dataset.turns;
        }
      }
      // Newest first, as the page lists them, above the rows shown.
      for (const row of fresh.reverse()) {
        body.prepend(row);
        bindActions(row.querySelector(".thread-actions"));
        if (row.getBoundingClientRect().bottom <= 0) {
          window.scrollBy(0, row.offsetHeight); // keep the rows in view where they were
        }
      }
    };

    const poll = async () => {
      let answer;
      try {
        answer = await (await fetchOK("/api/threads" + location.search, "application/json")).json();
        const changed = answer.threads.filter((t) => {
          const row = body.querySelector(`tr.thread-row[data-thread="${CSS.escape(t.thread_id)}"]`);
          return row ? row.dataset.signature !== signature(t) : newestPage;
        });
        // A row the whole answer leaves out no longer matches the filters
        // (its call ended, say): it stays, dimmed, until the next load.
        if (!answer.next) {
          const listed = new Set(answer.threads.map((t) => t.thread_id));
          for (const row of body.rows) {
            row.classList.toggle("unmatched", !listed.has(row.dataset.thread));
          }
        }
        if (changed.length > 0) {
          await show(changed.map((t) => t.thread_id));
        }
      } catch (_) {
        // A failed poll is tried again at the next tick.
      }
      if (answer && !answer.live) {
        indicator.hidden = true;
        return;
      }
      window.setTimeout(poll, 2000);
    };
    // The feed's events: the threads they name are fetched together, a
    // moment after the first; a row archived, restored or deleted leaves
    // the list, and one the page no longer lists dims.
    const pending = new Set();
    let flushing = 0;
    const flush = async () => {
      flushing = 0;
      const ids = [...pending];
      pending.clear();
      try {
        await show(ids, true);
      } catch (_) {
        // The next event fetches again.
      }
    };
    const onEvent = (type, data) => {
      const row = data.thread_id && body.querySelector(`tr.thread-row[data-thread="${CSS.escape(data.thread_id)}"]`);
      switch (type) {
        case "reset":
          window.location.reload();
          return;
        case "session":
          return;
        case "deleted":
        case "archived":
          if (row) {
            row.remove();
            return;
          }
      }
      if (row || newestPage) {
        pending.add(data.thread_id);
        flushing = flushing || window.setTimeout(flush, 200);
      }
    };
    const polling = () => {
      indicator.hidden = !live.dataset.live;
      if (live.dataset.live) {
        window.setTimeout(poll, 2000);
      }
    };
    indicator.hidden = false;
    window.convtrace.follow("", onEvent, polling);
  }
})();
