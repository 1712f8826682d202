package runner

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// What runner's part of a run's way to the warm path read (the warm pass,
// outer/warmpass.go, keeps their stamps): the Taskfile, whose facts name
// the tasks; this clone's identity (state.yaml, and the repository that
// names the clone); and the secrets' rotation rule (SecretsChanged): the
// files it reads, and the variables of the environment whose values it
// compares.

// WarmInputs are the files (absolute paths) that decided runner's part of
// a run of dir whose VM is vm, and the variables of the environment the
// rotation rule reads. ok is false when their stamps cannot tell that the
// identity holds: the repository that names the clone is a worktree's
// (its .git a file naming another folder).
func WarmInputs(dir, vm string, getenv func(string) string) (files, refs []string, ok bool, err error) {
	files, ok = repositoryInputs(dir)
	if !ok {
		return nil, nil, false, nil
	}
	stamp, err := secretsStampPath(vm)
	if err != nil {
		return nil, nil, false, err
	}
	for _, rel := range []string{TaskfileName, StatePath,
		schema.SecretsFile, schema.SecretsEnvFile, secretsKeyPath, stamp, legacyStampPath} {
		files = append(files, filepath.Join(dir, filepath.FromSlash(rel)))
	}
	if store, err := SecretCommandStore(getenv); err == nil {
		files = append(files, store.File(dir))
	}
	refs, err = secretRefs(dir, SecretCommandNames(dir, getenv))
	return files, refs, true, err
}

// RotationEnvMAC is the keyed fingerprint of the environment's values of
// refs, under the folder's secrets key (the rotation stamps' own): it tells
// a changed value and reveals none. "" when the folder has no key: no VM
// was stamped with one, and the rotation rule then compares nothing; ""
// too when refs are none.
func RotationEnvMAC(dir string, refs []string, getenv func(string) string) string {
	if len(refs) == 0 || folderfs.Local(dir, secretsKeyPath) != nil {
		return ""
	}
	key, err := os.ReadFile(filepath.Join(dir, secretsKeyPath))
	if err != nil || len(key) != 32 {
		return ""
	}
	return keyedSum(key, refs, getenv)
}

// repositoryInputs are the .git names gitCommonDir looks at, from dir up
// to the first that is there (a folder: the clone's repository) or to the
// root: one that appears or changes names another clone. ok is false for
// a worktree's .git file, and for a name that cannot be looked at.
func repositoryInputs(dir string) ([]string, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, false
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	var files []string
	for p := abs; ; p = filepath.Dir(p) {
		dotgit := filepath.Join(p, ".git")
		files = append(files, dotgit)
		fi, err := os.Stat(dotgit)
		switch {
		case err == nil:
			return files, fi.IsDir()
		case !errors.Is(err, fs.ErrNotExist):
			return nil, false
		case filepath.Dir(p) == p:
			return files, true
		}
	}
}
