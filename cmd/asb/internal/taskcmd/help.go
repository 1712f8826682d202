package taskcmd

// The help of asb task: what each task does, and how runs behave.
const taskLong = `Run tasks of the outer folder's Taskfile.yml with go-task, which is built into
asb (no task binary needed). The outer folder is found by walking up from the
current folder, so this works from workspace/src/... too; --dir overrides.

Like make, each task declares its inputs and status checks and is redone only
when out of date: the first 'asb task agent' builds the toolchain image, loads
it into microsandbox, creates the home volume and the VM and attaches the
agent; the next one only attaches. Arguments after -- reach the agent (or the
command of vm:exec).

The tasks:
  agent        start the agent in the VM (everything it needs first)
  image:build  build toolchain/ with docker or podman ($ASB_BUILDER overrides)
  image:load   stream the image into microsandbox
  home:create  create the persistent home volume (/home/dev)
  vm:create    create the VM from sandbox.yaml and secrets.yaml (validated first)
  vm:start     start the VM if it is stopped
  vm:stop      stop the VM
  vm:rm        remove the VM (the home volume stays)
  vm:shell     a shell in the VM as dev in /workspace
  vm:exec      run a command in the VM: asb task vm:exec -- CMD ARGS
  status       the VM, its image and its home volume
  logs         the VM's captured output
  home:reset   remove and recreate the home volume (asks first; --yes)

vm:create and vm:start first check that a microVM can boot on this host
(asb doctor --boot: /dev/kvm and CPU virtualization): where it cannot, they
stop in a second, before any image is built, with the reason and the fix,
instead of waiting minutes for msb to give up. ASB_SKIP_HOST_CHECK=1 skips
that check. Ctrl-C during a boot ends it: no msb machine process is left
running, and the half-made VM is removed (the next run creates it again).

A folder runs only once you approved it (asb trust; asb init approves what
it writes) and when no policy file forbids what it asks for: otherwise
asb task shows what it would grant and what widened since the version you
approved, asks at a terminal, and runs nothing (docs/trust.md).

Two runs in one outer folder take turns (a lock under .asb/, which the
system releases however a run ends): the second waits for the first to
bring the VM up, says so, then attaches too.

Names are this clone's own: the VM is <folder>-<hash>-<agent>, where the hash
is of the clone's git folder, so two clones on one machine never share a VM.
The home volume's name is recorded in .asb/state.yaml (never read when git
tracks it: it would be another clone's); if that record is lost, asb finds
this clone's home volume in msb again instead of making a new, empty one.`

const taskExample = `  asb task agent                   # build what is out of date, attach OpenCode
  asb task agent -- --model anthropic/claude-sonnet-4-5
  asb task vm:exec -- git status
  asb task --list
  asb task --dry agent             # print the commands, run nothing
  asb task --force image:build     # rebuild even if up to date
  ASB_BUILDER=podman asb task image:build`
