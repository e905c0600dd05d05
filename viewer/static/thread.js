// convtrace viewer: script of the thread page; does nothing elsewhere.
"use strict";
document.addEventListener("click", (event) => {
  const button = event.target.closest("button.show-full");
  if (!button) {
    return;
  }
  const content = document.getElementById(button.getAttribute("aria-controls"));
  if (!content) {
    return;
  }
  if (!button.dataset.label) {
    button.dataset.label = button.textContent;
  }
  const expanded = content.classList.toggle("collapsed") === false;
  button.setAttribute("aria-expanded", String(expanded));
  button.textContent = expanded ? "Show less" : button.dataset.label;
});
