// run.mjs runs SQL in chDB, the in-process ClickHouse engine, so that tests
// can check convtrace's DDL and queries against a modern server. Package
// chdbcheck (doc.go) is its only caller.
//
// stdin:  {"statements": ["CREATE TABLE ...", ...], "queries": ["SELECT ...", ...]}
// stdout: {"version": "26.7.2.1", "results": [{"columns": [{"name", "type"}], "rows": [{...}]}]}
//
// Everything runs in a session on a fresh temporary directory (removed on
// close), inside a database named convtrace because the DDL names its tables
// unqualified. Statements run in order, then each query; the first failure
// stops the run, exits 1 and is reported as
// {"version": "...", "error": {"stage", "index", "sql", "message"}}.
// A chdb that cannot be loaded is reported with stage "load" and exit 3.
import { text } from "node:stream/consumers";

const out = {};
try {
  const input = await guard({ stage: "input" }, async () => JSON.parse(await text(process.stdin)));
  const chdb = await guard({ stage: "load" }, () => import("chdb"));
  await run(chdb, input);
} catch (err) {
  out.error = { ...(err.where ?? { stage: "internal" }), message: err.message };
}
process.stdout.write(JSON.stringify(out) + "\n");
process.exitCode = !out.error ? 0 : out.error.stage === "load" ? 3 : 1;

async function run(chdb, input) {
  const statements = input.statements ?? [];
  const queries = input.queries ?? [];
  const session = await guard({ stage: "session" }, () => new chdb.Session("", {
    // Lossless JSON: 64-bit integers and decimals arrive as strings, as
    // ClickHouse's HTTP interface has long sent them.
    connectionArgs: [
      "--output_format_json_quote_64bit_integers=1",
      "--output_format_json_quote_decimals=1",
    ],
  }));
  try {
    await guard({ stage: "session" }, () => {
      out.version = session.query("SELECT version()", "TSVRaw").trim();
      session.query("CREATE DATABASE IF NOT EXISTS convtrace");
      session.query("USE convtrace");
    });
    for (const [index, sql] of statements.entries()) {
      await guard({ stage: "statement", index, sql }, () => session.query(sql));
    }
    out.results = [];
    for (const [index, sql] of queries.entries()) {
      const { meta, data } = await guard({ stage: "query", index, sql }, () => JSON.parse(session.query(sql, "JSON")));
      out.results.push({ columns: meta, rows: data });
    }
  } finally {
    session.close();
  }
}

// guard runs fn, labelling what it throws with where it failed.
async function guard(where, fn) {
  try {
    return await fn();
  } catch (cause) {
    throw Object.assign(new Error(String(cause?.message ?? cause)), { where });
  }
}
