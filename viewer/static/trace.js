// convtrace viewer: script of the trace page; does nothing elsewhere.
"use strict";
