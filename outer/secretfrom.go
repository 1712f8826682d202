package outer

import "github.com/agents-sandbox/asb/runner"

// FromCommand is where SecretView.From says a value comes from a command
// (asb secret add --from).
const FromCommand = "command"

// fromCommands are the names of the secrets whose value comes from a
// command this user recorded for this folder (the command never leaves
// this host; it is not read into the summary).
func (f *Folder) fromCommands() map[string]bool {
	return runner.SecretCommandNames(f.Dir, f.Getenv)
}

// FromCommandFunc is schema.CheckOptions.FromCommand for this folder.
func (f *Folder) FromCommandFunc() func(string) bool {
	from := f.fromCommands()
	return func(name string) bool { return from[name] }
}
