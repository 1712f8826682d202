package schema

import (
	"os"
	"path/filepath"
	"strings"
)

// ToolchainDir is the image's build context.
const ToolchainDir = "toolchain"

// CheckToolchain is the toolchain's own check alone: `asb image build`
// asks it before the builder runs, so that a build no validate ran before
// (a direct asb task image:build) builds no recipe asb cannot judge.
func CheckToolchain(dir string) []Problem {
	c := newChecker(dir, CheckOptions{})
	c.checkToolchain()
	SortProblems(c.probs)
	return c.probs
}

// checkToolchain refuses what of toolchain/ asb can neither judge nor
// show: a Dockerfile in JSON form (BuildKit reads a frontend image from
// its syntax key), and another recipe beside it that a builder would build
// instead (podman and buildah prefer a Containerfile; docker falls back to
// a lowercase dockerfile). It runs once per check.
func (c *checker) checkToolchain() {
	if c.toolchainOK {
		return
	}
	c.toolchainOK = true
	entries, _ := os.ReadDir(filepath.Join(c.dir, ToolchainDir))
	for _, e := range entries {
		n := e.Name()
		if strings.EqualFold(n, "Containerfile") || strings.EqualFold(n, "Dockerfile") && n != "Dockerfile" {
			c.add(Problem{File: ToolchainDir + "/" + n, Severity: SeverityError,
				Msg: "not supported by asb: " + ToolchainDir + "/" + n + ", because a builder may build it instead of " + DockerfilePath +
					" (podman and buildah prefer a Containerfile, docker falls back to dockerfile), and asb judges and shows the images of the Dockerfile alone",
				Fix: "move what it holds into " + DockerfilePath + " and remove it"})
		}
	}
	c.probs = append(c.probs, c.dockerfile().unsupported...)
}

// dockerfile is toolchain/Dockerfile as read (nothing when it is missing
// or unreadable).
func (c *checker) dockerfile() *dockerfileRead {
	if c.df == nil {
		c.df = &dockerfileRead{}
		if data, ok, err := c.read(DockerfilePath); err == nil && ok {
			*c.df = readDockerfile(string(data))
		}
	}
	return c.df
}
