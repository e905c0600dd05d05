ALTER TABLE `turn_notes_local` DELETE WHERE (thread_id, turn_id) IN (
    SELECT thread_id, turn_id
    FROM `conversations_local`
    WHERE start_ns < ? AND (? = '' OR project = ?) AND thread_id IN (SELECT thread_id FROM `turn_notes_local`));
-- $1 = 1700000000000000000
-- $2 = p
-- $3 = p
