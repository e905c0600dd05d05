// convtrace viewer: script of the cost page; does nothing elsewhere.
"use strict";
