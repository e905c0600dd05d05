-- Time to first token: nanoseconds from a streamed call's request to the
-- first chunk of its answer, on the turn that ends the call (its response,
-- or its error turn when the stream failed after it began); 0 when unknown:
-- a call not streamed, or a source that does not report it.
ALTER TABLE conversations ADD COLUMN {{ifNotExists}}ttft_ns UInt64 DEFAULT 0 AFTER duration_ns
