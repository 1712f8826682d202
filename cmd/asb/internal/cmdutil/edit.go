package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// EditFolder opens the outer folder for a command that changes it (secret,
// network, mount and port edits, image certs): it takes the folder's lock,
// the one asb init takes, before it reads anything, so two edits at once
// never lose one of them, and removes the staging files a killed write
// left. release drops the lock; call it when the command is done.
func EditFolder(ctx context.Context, f *Factory, dirFlag, what string) (fo *outer.Folder, release func(), err error) {
	dir, err := FolderDir(f.Getwd, dirFlag)
	if err != nil {
		return nil, nil, err
	}
	lock, err := runner.LockFolder(ctx, dir, what, f.IO.ErrOut)
	if err != nil {
		return nil, nil, err
	}
	CleanStaging(dir, f.IO.ErrOut)
	pol, err := Judge(f).Policy()
	if err != nil {
		lock.Release()
		return nil, nil, err
	}
	fo, err = outer.Open(dir, outer.Options{Getenv: f.Getenv, Agents: Agents(f), Policy: pol})
	if err != nil {
		lock.Release()
		return nil, nil, err
	}
	keep := KeepApproval(f, dir)
	return fo, func() { keep(); lock.Release() }, nil
}

// Judge is who decides whether a folder may run (outer.Judge), with this
// run's templates, environment and machine policy.
func Judge(f *Factory) outer.Judge {
	return outer.Judge{Templates: f.Templates, Getenv: f.Getenv, MachinePolicy: f.MachinePolicy}
}

// KeepApproval notes whether the outer folder dir is trusted before an edit
// asb makes for the user; the returned func, called after the edit, keeps
// it approved with its new content and answers (outer.ApproveEdit). A
// folder that was not trusted stays so: an edit approves nothing.
func KeepApproval(f *Factory, dir string) func() {
	j := Judge(f)
	before, err := j.Check(dir)
	if err != nil || !before.Trusted {
		return func() {}
	}
	return func() {
		if err := outer.ApproveEdit(dir, before, j); err != nil {
			fmt.Fprintf(f.IO.ErrOut, "asb: warning: the folder changed but its approval was not recorded (asb trust records it): %v\n", err)
		}
	}
}

// CleanStaging removes, from the outer folder dir, the staging files a
// killed asb left (they may hold secrets.env's values), saying so on w,
// and returns how many. The caller holds the folder's lock.
//
// It walks the folder, so it runs where that costs nothing beside the
// rest: under the lock of a command that writes (EditFolder, init, update,
// sync), before a full asb task run, and when a trust check finds the
// folder changed. A warm run, validate and the looking commands never walk.
func CleanStaging(dir string, w io.Writer) int {
	removed, err := generator.CleanStaging(dir)
	if own := (*folderfs.OwnLinkError)(nil); errors.As(err, &own) {
		return 0 // the command refuses the folder itself, saying why
	}
	if err != nil {
		fmt.Fprintf(w, "asb: warning: could not remove the staging files a killed asb left: %v\n", err)
		return 0
	}
	if len(removed) > 0 {
		fmt.Fprintf(w, "asb: removed %d staging file(s) a killed asb left: %s\n", len(removed), strings.Join(removed, ", "))
	}
	return len(removed)
}

// CleanStaleStaging is CleanStaging for a command that does not otherwise
// hold the folder's lock (asb task): it cleans only when no other asb holds
// it (a live write's staging files are its own), and never waits.
func CleanStaleStaging(dir string, w io.Writer) int {
	lock, err := runner.TryLockFolder(dir, "removing staging files")
	if err != nil || lock == nil {
		return 0
	}
	defer lock.Release()
	return CleanStaging(dir, w)
}
