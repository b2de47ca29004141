#!/usr/bin/env python3
# A stand-in for systemctl with a small service manager behind it, for test/update.test.ts (the
# machine running the tests has no systemd as PID 1). It does what pinclaw update relies on for a
# Type=notify unit with WatchdogSec=: `restart` starts the unit's ExecStart in a new session with
# NOTIFY_SOCKET and WATCHDOG_USEC, and the manager turns the datagrams it receives into the
# properties `show` prints (READY=1: active/running; WATCHDOG=1: WatchdogTimestampMonotonic); an
# exit makes the unit failed. $FAKE_SYSTEMD_DIR holds unit.json ({"exec": [...], "watchdogUsec": N}),
# state.json and the manager's log.
import json, os, signal, socket, subprocess, sys, time, uuid

D = os.environ['FAKE_SYSTEMD_DIR']
args = [a for a in sys.argv[1:] if a not in ('--user', '--system', '--no-block')]


def load(name, default):
    try:
        with open(os.path.join(D, name)) as f:
            return json.load(f)
    except FileNotFoundError:
        return default


def save(obj):
    tmp = os.path.join(D, 'state.json.tmp')
    with open(tmp, 'w') as f:
        json.dump(obj, f)
    os.replace(tmp, os.path.join(D, 'state.json'))


def update(**kv):
    st = load('state.json', {})
    st.update({k: str(v) for k, v in kv.items()})
    save(st)


def mono():
    return int(time.monotonic() * 1e6)


unit = load('unit.json', None)


def kill_manager():
    st = load('state.json', {})
    pgid = int(st.get('manager', '0'))  # a process group
    if pgid <= 0:
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.time() + 2
    while time.time() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)


def manage():
    sock_path = os.path.join(D, 'notify.sock')
    try:
        os.unlink(sock_path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(sock_path)
    s.settimeout(0.05)
    env = dict(os.environ, NOTIFY_SOCKET=sock_path, WATCHDOG_USEC=str(unit['watchdogUsec']))
    log = open(os.path.join(D, 'gateway.log'), 'a')
    child = subprocess.Popen(unit['exec'], env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    update(MainPID=child.pid, ExecMainStartTimestampMonotonic=mono())
    while True:
        try:
            msg = s.recv(4096).decode('utf-8', 'replace')
        except socket.timeout:
            msg = ''
        for line in msg.split('\n'):
            if line == 'READY=1':
                update(ActiveState='active', SubState='running', WatchdogTimestampMonotonic=mono())
            elif line == 'WATCHDOG=1':
                update(WatchdogTimestampMonotonic=mono())
        if child.poll() is not None:
            update(ActiveState='failed', SubState='failed', Result='exit-code', MainPID=0)
            return


if args[:1] == ['show']:
    if len(args) < 2 or args[1].startswith('--'):
        print('252')  # `systemctl show --property=Version --value`: the manager answers
        sys.exit(0)
    props = [p for a in args if a.startswith('--property=') for p in a[len('--property='):].split(',')]
    base = {'LoadState': 'loaded' if unit else 'not-found', 'ActiveState': 'inactive', 'SubState': 'dead', 'MainPID': '0', 'NRestarts': '0',
            'Result': 'success', 'WatchdogUSec': str(unit['watchdogUsec']) if unit else '0', 'WatchdogTimestampMonotonic': '0', 'InvocationID': ''}
    if unit:
        base['ExecStart'] = '{ path=%s ; argv[]=%s ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }' % (unit['exec'][0], ' '.join(unit['exec']))
    base.update(load('state.json', {}))
    for p in props:
        print('%s=%s' % (p, base.get(p, '')))
    sys.exit(0)

if args[:1] in (['restart'], ['stop']):
    kill_manager()
    st = load('state.json', {})
    starts = int(st.get('starts', '0'))
    if args[0] == 'stop':
        save({'ActiveState': 'inactive', 'SubState': 'dead', 'MainPID': '0', 'starts': str(starts)})
        sys.exit(0)
    save({'ActiveState': 'activating', 'SubState': 'start', 'MainPID': '0', 'InvocationID': uuid.uuid4().hex, 'starts': str(starts + 1)})
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            # Off the caller's pipes: whoever runs systemctl waits for them to close.
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            update(manager=os.getpgid(0))  # the session's group: the manager and the gateway it runs
            manage()
        os._exit(0)
    os.wait()
    # Returns once the manager has recorded itself, so a stop right after finds it.
    while 'manager' not in load('state.json', {}) or load('state.json', {}).get('MainPID') == '0' and load('state.json', {}).get('ActiveState') == 'activating':
        time.sleep(0.01)
    sys.exit(0)

print('systemctl stand-in: unsupported: %s' % ' '.join(sys.argv[1:]), file=sys.stderr)
sys.exit(1)
