package agentcheck

// The prompts of the recorded scenario.
const (
	ScenarioPrompt = "say hello using the shell"
	ResumePrompt   = "say hello again using the shell"
)
