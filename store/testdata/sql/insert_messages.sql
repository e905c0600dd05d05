INSERT INTO messages (project, thread_id, id, message)
