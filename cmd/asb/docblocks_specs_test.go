package main

// docSpec says how the stand-ins run one shell block of the docs
// (TestDocBlocks), or why they cannot.
type docSpec struct {
	// why, when set, is what the block needs that no stand-in gives: it is
	// then read and its asb commands checked, not run.
	why string
	// setup are testscript lines run before the block (after docPreamble).
	setup string
	// expect maps a command of the block, as written, to the testscript
	// lines that replace its plain `exec` (what it does instead of
	// succeeding, and how that shows), e.g. a question nobody answers.
	expect map[string]string
	// check are testscript lines run after the block; files are txtar
	// files the script needs.
	check, files string
	// synopsis: the block shows a command's form (with [OPTIONAL] parts),
	// not a command; it is neither checked nor run.
	synopsis bool
}

// docBlocks has one entry per shell block of the quick starts, keyed by
// "FILE: its first line".
var docBlocks = map[string]docSpec{
	"README.md: make demo   # install asb and the real tools, lay down a demo outer folder for OpenCode in ./demo": {
		why: "make demo and make test install the real tools (msb from npm, podman, docker) and run the whole suite; TestFirstRunTranscript runs what make demo runs, with the stand-ins",
	},
	"docs/install.md: make demo   # install asb and the real tools, lay down a demo outer folder for OpenCode in ./demo": {
		why: "make demo installs the real tools; TestFirstRunTranscript runs what it runs, with the stand-ins",
	},
	"README.md: asb init --agent opencode myproj        # lay down the outer folder": {
		check: `grep '^OPENCODE_API_KEY=doc-value$' secrets.env
grep '"msb","create"' $WORK/fakestate/calls.log
grep '"msb","exec".*"opencode"' $WORK/fakestate/calls.log`,
	},
	"docs/team.md: # A, once": {
		// A's project is reached over ssh (a stand-in that runs git's
		// upload-pack here), the team's repository is a bare one here.
		setup: `env GIT_SSH_COMMAND='sh '$WORK'/ssh-stand-in'
env GIT_SSH_VARIANT=simple
exec git init -q --bare $WORK/app.git
exec git clone -q ssh://stand-in$WORK/app.git $WORK/seed
exec sh -c 'echo app >$WORK/seed/README.md'
exec git -C $WORK/seed add README.md
exec git -C $WORK/seed commit -q -m app
exec git -C $WORK/seed push -q origin HEAD:main
exec git init -q --bare $WORK/team.git
env GIT_CONFIG_COUNT=3
env GIT_CONFIG_KEY_1=url.ssh://stand-in$WORK/app.git.insteadOf
env GIT_CONFIG_VALUE_1=git@github.com:me/app.git
env GIT_CONFIG_KEY_2=url.$WORK/team.git.insteadOf
env GIT_CONFIG_VALUE_2=git@example.com:team/app-sandbox.git
mkdir $WORK/a $WORK/b
cd $WORK/a`,
		expect: map[string]string{
			// A pushes to the team's repository; B is another machine.
			"git push": "exec git push -q $WORK/team.git HEAD:main\ncd $WORK/b",
			"git clone git@example.com:team/app-sandbox.git": "exec git clone -q git@example.com:team/app-sandbox.git",
			"asb sync": "exec asb sync\nstdout 'workspace/ cloned from git@github.com:me/app.git'",
		},
		check: `exists workspace/README.md
grep '"msb","create"' $WORK/fakestate/calls.log`,
		files: sshStandIn,
	},
	"docs/team.md: asb init --agent opencode --workspace ~/src/myapp myapp-sandbox": {
		setup: `env GIT_SSH_COMMAND='sh '$WORK'/ssh-stand-in'
env GIT_SSH_VARIANT=simple
exec git init -q --bare $WORK/app.git
exec git clone -q ssh://stand-in$WORK/app.git $HOME/src/myapp
exec sh -c 'echo app >$HOME/src/myapp/README.md'
exec git -C $HOME/src/myapp add README.md
exec git -C $HOME/src/myapp commit -q -m app`,
		check: `grep '^  url: ssh://stand-in.*/app.git$' myapp-sandbox/asb.yaml
exists myapp-sandbox/workspace/README.md`,
		files: sshStandIn,
	},
	"docs/sessions.md: asb session new fix-login            # branch asb/fix-login from workspace/'s current branch (--base REF)": {
		setup: `env OPENCODE_API_KEY=doc-value
env OPENAI_API_KEY=doc-value
exec asb init --agent opencode proj
cd proj
exec asb agent add codex
exec git -C workspace init -q
exec sh -c 'echo x >workspace/a.txt'
exec git -C workspace add a.txt
exec git -C workspace commit -q -m first`,
		expect: map[string]string{
			// The branch holds no commit of its own: nothing to merge.
			// A checkout of the user's own takes the branch from the host
			// repository; it holds no commit of its own: nothing to merge.
			"git fetch asb":           "exec git clone -q workspace $WORK/mine\nexec git -C $WORK/mine remote add asb $WORK/proj/.asb/git\nexec git -C $WORK/mine fetch -q asb",
			"git merge asb/fix-login": "exec git -C $WORK/mine merge asb/fix-login\nstdout 'Already up to date'",
		},
		check: `! exists .asb/sessions/fix-login
exists .asb/sessions/docs`,
	},
	"docs/network.md: asb network check https://registry.npmjs.org/react   # Allowed/Denied, and the rule that decided (exit 1 when denied)": {
		setup: `env OPENCODE_API_KEY=doc-value
exec asb init --agent opencode proj
cd proj`,
		expect: map[string]string{
			"asb network check https://registry.npmjs.org/react": "! exec asb network check https://registry.npmjs.org/react\nstdout '^Denied: no allow entry matches registry.npmjs.org'",
			// No terminal: learn lists what it would add and asks nobody.
			"asb network learn": "exec asb network learn",
		},
	},
	"docs/secrets.md: asb secret add GITHUB_TOKEN --allow api.github.com,github.com --from 'gh auth token'": {
		setup: `exec asb init --agent opencode proj
cd proj`,
		check: `exec asb secret ls
stdout 'GITHUB_TOKEN'
stdout 'OPENAI_API_KEY'
! exists secrets.env.orig`,
	},
	"docs/serve.md: asb serve                 # serving at http://127.0.0.1:41873 (user opencode)": {
		setup: `env OPENCODE_API_KEY=doc-value
chmod 755 $WORK/clientbin/opencode
env PATH=$WORK/clientbin${:}$PATH
exec asb init --agent opencode proj
cd proj`,
		expect: map[string]string{
			"asb serve":          "exec asb serve\nstdout '^serving at http://127\\.0\\.0\\.1:4[01][0-9][0-9][0-9]$'",
			"asb attach":         "exec asb attach\nstdout '^client: attach http://127\\.0\\.0\\.1:4'",
			"asb attach --print": "exec asb attach --print\nstdout 'http://127\\.0\\.0\\.1:4'",
		},
		files: `-- clientbin/opencode --
#!/bin/sh
echo "client: $*"
`,
	},
	"docs/disk.md: asb ls                  # live VMs of asb's: FOLDER SESSION AGENT VM STATUS AGE DISK": {
		setup: `env OPENCODE_API_KEY=doc-value
exec asb init --agent opencode proj
cd proj
exec asb task vm:create
exec asb task vm:stop
exec msb volume create old-home-volume-name
cd $WORK`,
		expect: map[string]string{
			// No terminal to ask at: prune refuses without --yes.
			"asb prune": "! exec asb prune\nstderr 'at a terminal to be asked, or pass --yes'",
			"asb prune --older-than 7d --volume old-home-volume-name": "! exec asb prune --older-than 7d --volume old-home-volume-name\nstderr 'removes the 1 listed above only when told'",
		},
		check: `exec asb prune --older-than 7d --volume old-home-volume-name --yes
exec msb volume ls
! stdout old-home-volume-name`,
	},
	"docs/kubernetes.md: docker build -t registry.example.com/team/demo:opencode toolchain/ && docker push registry.example.com/team/demo:opencode": {
		why: "it pushes to a registry and applies to a cluster with agent-sandbox installed; export_kubernetes.txtar runs asb export kubernetes itself, kubetest/ applies it to a real control plane",
	},
	"docs/kubernetes.md: asb export kubernetes [--runtime-class gvisor|kata|NAME|none] [--image REF] [--egress cilium|none]": {
		why:      "a synopsis of the command's form, not a command",
		synopsis: true,
	},
}

const sshStandIn = `-- ssh-stand-in --
# ssh HOST COMMAND, run here: git's upload-pack on the local repository.
for a; do last=$a; done
exec sh -c "$last"
`
