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

  for (const box of document.querySelectorAll(".thread-actions")) {
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
  }
})();
