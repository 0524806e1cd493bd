/**
 * The spawner: a Perl program (modules from Debian's Essential `perl-base` only), passed with
 * `perl -e`, so nothing a command can write is ever executed by it. Started once per dsh
 * process; it forks and execs each command, so dsh's own (large) page table is copied once.
 *
 * Argument: the path of a unix socket it listens on (in a 0700 directory dsh made). dsh
 * connects one output channel per command there and sends a 32-byte token first.
 *
 * stdin (from dsh): frames of a 4-byte big-endian length and a payload of NUL-separated
 * fields: `run`, id, token, cwd, argc, argv[0..argc), then environment entries `KEY=VALUE`;
 * or `done`, pgid (dsh has settled that call: the group is empty and forgotten).
 * stdout (to dsh): lines `R` (listening), `S id pid` (exec succeeded), `F id stage errno
 * text` (fork, chdir or exec failed; the child never ran), `X id code signal` (the leader
 * was reaped; `-` for the absent one).
 *
 * Each child: a new session and process group (setsid), stdin /dev/null, stdout and stderr
 * both the channel socket (one file: the order is the order of the writes), exactly the
 * given environment, default signal dispositions and an empty mask. Exec failures come back
 * over a close-on-exec pipe. On EOF of stdin (dsh exited or was killed), every live group
 * gets SIGKILL and the spawner exits; the host spawner then removes every file of its
 * socket's directory (the shared sandboxes' sockets live there too) and the directory.
 *
 * Inside a shared sandbox (0092) the arguments are `-` and prctl(2)'s number (the spawner makes
 * itself non-dumpable: commands, same uid, cannot ptrace it). The listening socket is inherited on
 * fd 4 (the sandbox cannot make unix sockets: seccomp), stdin and stdout are one socket to
 * dsh, and stderr goes to /dev/null once `R` is out. Three differences there: a leader is
 * reaped only after dsh sent `ack`, pid (dsh maps the pid it reported, the sandbox's, to the
 * host's while it is still unreaped); `done` leaving no command running sweeps the sandbox
 * back to its first state (every process but pid 1 and the spawner SIGKILLed by kill(-1), what was added
 * to /dev and /dev/shm removed, /dev's symlinks restored, System V IPC objects removed); and
 * the sandbox's paths are read-only, so nothing is unlinked at exit.
 */
export const SPAWNER_SCRIPT = String.raw`
use strict;
use POSIX ();
use Socket qw(AF_UNIX SOCK_STREAM pack_sockaddr_un);
use Errno qw(EINTR EAGAIN);
my $path = $ARGV[0];
my $inner = $path eq '-';
$SIG{PIPE} = 'IGNORE';
my $lis;
if ($inner) {
  open($lis, '+<&=', 4) or die "fd 4: $!\n";
  POSIX::close(3);
  syscall($ARGV[1], 4, 0, 0, 0, 0) if $ARGV[1]; # PR_SET_DUMPABLE 0
} else {
  socket($lis, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\n";
  bind($lis, pack_sockaddr_un($path)) or die "bind $path: $!\n";
  listen($lis, 128) or die "listen: $!\n";
}
chdir '/';
my $chld = 0;
$SIG{CHLD} = sub { $chld = 1 };
my (%pending, %chan, %queued, %live, %groups, %acked);
my $in = '';
sub out { my $s = shift; while (length $s) { my $n = syswrite(STDOUT, $s); if (!defined $n) { next if $! == EINTR; killall(); } substr($s, 0, $n) = '' } }
# dsh is gone (it may have died -9): the socket and its mkdtemp directory go with the spawner
sub killall {
  for my $pid (keys %groups) { kill 'KILL', -$pid } for my $pid (keys %live) { kill 'KILL', $pid }
  if (!$inner) { my $d = $path =~ s{/[^/]*\z}{}r; if (opendir(my $dh, $d)) { unlink map { "$d/$_" } grep { !/\A\.\.?\z/ } readdir $dh } rmdir $d }
  POSIX::_exit(0)
}
# the sandbox's /dev as it was at start: name => [inode, symlink target]
my (%dev0, $shm0);
sub devsnap { $shm0 = (stat '/dev/shm')[2]; opendir(my $dh, '/dev') or return; for (grep { !/\A\.\.?\z/ } readdir $dh) { my @st = lstat "/dev/$_"; $dev0{$_} = [$st[1], readlink "/dev/$_"] } }
# removes a file or a directory tree (symlinks not followed); File::Path would cost ~1 MB
sub rmtree { my $p = shift; if (-d $p && !-l $p) { if (opendir(my $dh, $p)) { rmtree("$p/$_") for grep { !/\A\.\.?\z/ } readdir $dh } rmdir $p } else { unlink $p } }
sub zombie { open(my $st, '<', "/proc/$_[0]/stat") or return 1; my $line = <$st> // ''; $line =~ /\) Z / }
sub sweep {
  # kill(-1): every process of the namespace but pid 1 and the caller, in one pass the kernel
  # holds against fork (one kill per pid read from /proc missed children forked meanwhile)
  kill 'KILL', -1;
  # a killed process stays in /proc until it is scheduled and exits: wait (at most ~2 s) so the
  # next command starts beside pid 1 and the spawner only (zombies wait for pid 1 to reap them)
  for (1 .. 400) {
    opendir(my $ph, '/proc') or last;
    my @left = grep { /\A\d+\z/ && $_ != 1 && $_ != $$ && !zombie($_) } readdir $ph;
    last unless @left;
    kill 'KILL', -1;
    select(undef, undef, undef, 0.005);
  }
  if (opendir(my $dh, '/dev')) {
    for (grep { !/\A\.\.?\z/ } readdir $dh) {
      my @st = lstat "/dev/$_";
      rmtree("/dev/$_") if !$dev0{$_} || $dev0{$_}[0] != $st[1];
    }
  }
  for (keys %dev0) { symlink($dev0{$_}[1], "/dev/$_") if defined $dev0{$_}[1] && !defined readlink "/dev/$_" }
  if (opendir(my $sh, '/dev/shm')) { rmtree("/dev/shm/$_") for grep { !/\A\.\.?\z/ } readdir $sh }
  chmod $shm0 & 07777, '/dev/shm' if defined $shm0;
  for my $kind (qw(shm msg sem)) {
    open(my $fh, '<', "/proc/sysvipc/$kind") or next;
    <$fh>;
    while (<$fh>) { my (undef, $id) = split ' '; next unless defined $id; $kind eq 'shm' ? shmctl($id, 0, 0) : $kind eq 'msg' ? msgctl($id, 0, 0) : semctl($id, 0, 0, 0) }
  }
}
sub reap {
  for my $pid (keys %live) {
    next if $inner && !$acked{$pid};
    my $r = waitpid($pid, POSIX::WNOHANG());
    next unless $r == $pid;
    my $st = $?;
    my $id = delete $live{$pid};
    delete $acked{$pid};
    if (POSIX::WIFSIGNALED($st)) { out("X $id - " . POSIX::WTERMSIG($st) . "\n") }
    else { out("X $id " . POSIX::WEXITSTATUS($st) . " -\n") }
  }
}
sub start {
  my ($f, $ch) = @_;
  my ($id, $token, $cwd, $argc) = @$f[0 .. 3];
  my @argv = @$f[4 .. 3 + $argc];
  my @env = @$f[4 + $argc .. $#$f];
  my ($er, $ew);
  if (!pipe($er, $ew)) { out("F $id pipe " . ($! + 0) . " $!\n"); close $ch; return }
  my $pid = fork();
  if (!defined $pid) { out("F $id fork " . ($! + 0) . " $!\n"); close $ch; close $er; close $ew; return }
  if ($pid == 0) {
    my $stage = 'setup';
    $SIG{$_} = 'DEFAULT' for keys %SIG;
    POSIX::sigprocmask(POSIX::SIG_SETMASK(), POSIX::SigSet->new());
    POSIX::setsid();
    close $lis;
    if (open(STDIN, '<', '/dev/null') && POSIX::dup2(fileno($ch), 1) && POSIX::dup2(fileno($ch), 2)) {
      $stage = 'chdir';
      if (chdir $cwd) {
        %ENV = ();
        for my $e (@env) { my ($k, $v) = split /=/, $e, 2; $ENV{$k} = $v }
        $stage = 'exec';
        { no warnings; exec { $argv[0] } @argv; }
      }
    }
    my $err = $! + 0;
    syswrite($ew, "$stage $err " . POSIX::strerror($err));
    POSIX::_exit(127);
  }
  close $ew;
  close $ch;
  my $msg = '';
  while (1) { my $n = sysread($er, my $b, 512); if (!defined $n) { next if $! == EINTR; last } last if $n == 0; $msg .= $b }
  close $er;
  if (length $msg) { waitpid($pid, 0); out("F $id $msg\n"); return }
  $live{$pid} = $id;
  $groups{$pid} = 1;
  out("S $id $pid\n");
}
if ($inner) { devsnap(); out("R\n"); open(STDERR, '>', '/dev/null') } else { out("R\n") }
while (1) {
  my $rin = '';
  vec($rin, 0, 1) = 1;
  vec($rin, fileno($lis), 1) = 1;
  vec($rin, fileno($_->[0]), 1) = 1 for values %pending;
  vec($rin, fileno($_), 1) = 1 for values %chan;
  $chld = 0;
  reap() if %live;
  # a SIGCHLD between the check and the select's start is caught by the timeout
  my $n = select(my $rout = $rin, undef, undef, !%live ? undef : $chld ? 0 : 0.05);
  if ($n < 0) { next if $! == EINTR; die "select: $!\n" }
  next if $n == 0;
  for my $t (keys %chan) {
    # dsh writes nothing after the token: readable means it closed an unused channel (first: the
    # connections below that become channels now were readable for their token)
    next unless vec($rout, fileno($chan{$t}), 1);
    close(delete $chan{$t});
  }
  if (vec($rout, 0, 1)) {
    my $r = sysread(STDIN, $in, 65536, length $in);
    if (defined $r && $r == 0) { killall() }
    while (length($in) >= 4) {
      my $len = unpack('N', $in);
      last if length($in) < 4 + $len;
      my @f = split /\0/, substr($in, 4, $len), -1;
      substr($in, 0, 4 + $len) = '';
      my $kind = shift @f;
      if ($kind eq 'done') { delete $groups{$f[0]}; sweep() if $inner && !%groups && !%live && !%queued; next }
      if ($kind eq 'ack') { $acked{$f[0]} = 1; next }
      my $ch = delete $chan{$f[1]};
      if ($ch) { start(\@f, $ch) } else { $queued{$f[1]} = \@f }
    }
  }
  if (vec($rout, fileno($lis), 1)) {
    if (accept(my $c, $lis)) { $pending{fileno $c} = [$c, ''] }
  }
  for my $fd (keys %pending) {
    next unless vec($rout, $fd, 1);
    my $p = $pending{$fd};
    my $r = sysread($p->[0], $p->[1], 32 - length($p->[1]), length($p->[1]));
    if (!defined $r) { next if $! == EINTR || $! == EAGAIN; }
    if (!$r) { close $p->[0]; delete $pending{$fd}; next }
    next if length($p->[1]) < 32;
    delete $pending{$fd};
    my $f = delete $queued{$p->[1]};
    if ($f) { start($f, $p->[0]) } else { $chan{$p->[1]} = $p->[0] }
  }
}
`
