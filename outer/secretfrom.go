package outer

import "github.com/agents-sandbox/asb/runner"

// FromCommand is where SecretView.From says a value comes from a command
// (asb secret add --from).
const FromCommand = "command"

// fromCommands are the names of the secrets whose value comes from a
// command this user recorded for this folder (the command never leaves
// this host; it is not read into the summary).
func (f *Folder) fromCommands() map[string]bool {
	out := map[string]bool{}
	store, err := runner.SecretCommandStore(f.Getenv)
	if err != nil {
		return out
	}
	cmds, _ := store.Load(f.Dir)
	for name := range cmds {
		out[name] = true
	}
	return out
}
