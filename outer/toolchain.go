package outer

import (
	"fmt"
	"regexp"
)

// DockerfileFile is the toolchain image's Dockerfile.
const DockerfileFile = "toolchain/Dockerfile"

// SetDockerArg sets the default of `ARG NAME=…` in toolchain/Dockerfile (the
// base image, the agent's version), keeping every other line, and records
// the edit. There must be exactly one such line.
func (f *Folder) SetDockerArg(name, value string) error {
	data, ok := f.Current(DockerfileFile)
	if !ok {
		return fmt.Errorf("%s is missing", DockerfileFile)
	}
	re := regexp.MustCompile(`(?m)^(ARG[ \t]+` + regexp.QuoteMeta(name) + `=)\S*[ \t]*$`)
	if n := len(re.FindAllIndex(data, -1)); n != 1 {
		return fmt.Errorf("%s has %d lines ARG %s=…, not one: set it by hand", DockerfileFile, n, name)
	}
	f.Set(DockerfileFile, re.ReplaceAllFunc(data, func(line []byte) []byte {
		return append(re.FindSubmatch(line)[1], value...)
	}))
	return nil
}

// DockerArg returns the default of `ARG NAME=…` in toolchain/Dockerfile, ""
// when there is no such line (or more than one).
func (f *Folder) DockerArg(name string) string {
	data, ok := f.Current(DockerfileFile)
	if !ok {
		return ""
	}
	re := regexp.MustCompile(`(?m)^ARG[ \t]+` + regexp.QuoteMeta(name) + `=(\S*)[ \t]*$`)
	m := re.FindAllSubmatch(data, -1)
	if len(m) != 1 {
		return ""
	}
	return string(m[0][1])
}
