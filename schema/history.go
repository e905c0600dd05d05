package schema

import "github.com/convtrace/convtrace/schema/genai"

// StoredMessage is one row of the messages table: one message of a
// thread's history, stored once however many prompts repeat it
// (ddl/sql/0014_messages.sql).
type StoredMessage struct {
	Project  string
	ThreadID string
	ID       string // genai.MessageID of Message
	Message  string // its JSON text, exactly as in the prompt
}

// MessageColumns is the column list of every insert into messages, in the
// order of StoredMessage.Values.
var MessageColumns = []string{"project", "thread_id", "id", "message"}

// Values returns the message's column values in MessageColumns order.
func (m *StoredMessage) Values() []any {
	return []any{m.Project, m.ThreadID, m.ID, m.Message}
}

// StoreHistoryOnce splits a prompt turn (genai.SplitHistory): t keeps its
// new messages as Content and the earlier ones' ids as History, and the
// earlier messages are returned, to be stored before t. Other turns, split
// or cut prompts are left as they are (docs/design/messages.md).
func StoreHistoryOnce(t *Turn) []StoredMessage {
	if t.Role != RolePrompt || t.Truncated || t.History != nil {
		return nil
	}
	earlier, rest, ok := genai.SplitHistory(t.Content)
	if !ok {
		return nil
	}
	msgs := make([]StoredMessage, len(earlier))
	t.History = make([]string, len(earlier))
	for i, m := range earlier {
		id := genai.MessageID(m)
		msgs[i] = StoredMessage{Project: t.Project, ThreadID: t.ThreadID, ID: id, Message: m}
		t.History[i] = id
	}
	t.Content = rest
	return msgs
}

// WholeContentSQL is a conversations row's whole content in SQL, a prompt's
// history put back from messages byte for byte, over the columns ids and
// messages that HistoryJoinSQL adds. It uses replicate because 18.16's
// lambdas cannot read a subquery's other columns.
const WholeContentSQL = `if(empty(history), content, concat('[',
    arrayStringConcat(arrayMap((i, d, m) -> m[indexOf(d, i)], history, replicate(ids, history), replicate(messages, history)), ','),
    if(content = '[]', ']', concat(',', substring(content, 2)))))`

// HistoryJoinSQL joins conversations with the messages of each thread's
// history, for WholeContentSQL: "FROM conversations " + HistoryJoinSQL.
const HistoryJoinSQL = `ANY LEFT JOIN
(
    SELECT thread_id, groupArray(id) AS ids, groupArray(message) AS messages
    FROM (SELECT thread_id, id, any(message) AS message FROM messages GROUP BY thread_id, id)
    GROUP BY thread_id
) AS history_messages USING thread_id`
