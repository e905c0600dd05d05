SELECT groupUniqArrayIf(role, role != '') AS roles, groupUniqArrayIf(speaker, speaker != '') AS speakers,
       groupUniqArrayIf(agent, agent != '') AS agents, groupUniqArrayIf(tool_name, tool_name != '') AS tools,
       groupUniqArrayIf(session_id, session_id != '') AS sessions
FROM conversations
WHERE thread_id = ?
-- $1 = th
