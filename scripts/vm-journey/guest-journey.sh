#!/bin/bash
# The user journey, run as root inside the journey VM by vigil-journey.service (systemd is PID 1;
# see mkrootfs.sh). JOB (the 9p share) holds vigil.deb, yolox_nano.onnx and door.mp4; this
# script writes nothing there but its log, which the host reads from the console anyway.
# Every step prints `PASS <step>: ...` or `FAIL <step>: ...` followed by its evidence (command
# output, journal excerpts) indented with `|`. Exit status: the number of failed steps (0 = all
# passed); a failed step that later steps depend on ends the journey early.
set -u
job=${1:?usage: guest-journey.sh JOBDIR}
export LANG=C.UTF-8 SYSTEMD_PAGER='' SYSTEMD_COLORS=0 DEBIAN_FRONTEND=noninteractive
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

failures=0
step_name=""
step_t0=0
up() { cut -d' ' -f1 /proc/uptime; }
step() {
  step_name=$1
  step_t0=$(up)
  echo
  echo "---- step $step_name (uptime $step_t0 s): $2"
}
took() { awk -v a="$step_t0" -v b="$(up)" 'BEGIN { printf "%.1f s", b - a }'; }
pass() { echo "PASS $step_name: $* ($(took))"; }
fail() {
  echo "FAIL $step_name: $* ($(took))"
  failures=$((failures + 1))
}
# A step the rest depends on failed: report what is left and stop.
abort() {
  fail "$*"
  echo "ABORT: the remaining steps need '$step_name'; the journal of vigil.service:"
  journalctl -u vigil -n 40 --no-pager -o short-monotonic 2>&1 | evidence
  exit "$failures"
}
evidence() { sed 's/^/    | /'; }
# Journal lines of vigil.service since a `date +%s` value (optionally at a priority or above).
vigil_journal() { journalctl -u vigil --since "@$1" --no-pager -o short-monotonic ${2:+-p "$2"}; }
# Waits up to $1 seconds (wall time: a journalctl call alone takes a second or two under TCG)
# for the command after it to succeed.
wait_for() {
  local end=$((SECONDS + $1))
  shift
  until "$@" > /dev/null 2>&1; do
    ((SECONDS < end)) || return 1
    sleep 0.5
  done
}

echo "@@JOURNEY_START uptime=$(up) kernel=$(uname -r) systemd=$(systemctl --version | head -n 1)"

# ------------------------------------------------------------------------------------------
step boot "systemd is PID 1, the system came up, the broker runs"
state=$(systemctl is-system-running --wait 2> /dev/null)
{
  echo "PID 1: $(cat /proc/1/comm); system state: $state"
  systemctl --failed --no-legend --plain
  systemctl status mosquitto --no-pager -n 0 | sed -n '1,3p'
} 2>&1 | evidence
if [[ $(cat /proc/1/comm) == systemd && ($state == running || $state == degraded) ]] &&
  systemctl is-active -q mosquitto; then
  pass "systemd $state, mosquitto active"
else
  abort "systemd state '$state' or mosquitto not active"
fi

# ------------------------------------------------------------------------------------------
step install "dpkg -i the package offline: user created, service neither enabled nor started"
out=$(dpkg -i "$job/vigil.deb" 2>&1)
rc=$?
{
  echo "$out"
  echo "\$ id vigil: $(id vigil 2>&1)"
  echo "\$ systemctl is-enabled vigil: $(systemctl is-enabled vigil 2>&1)"
  echo "\$ systemctl is-active vigil: $(systemctl is-active vigil 2>&1)"
  ls -ld /etc/vigil /etc/vigil/cameras.yaml /var/lib/vigil 2>&1
} | evidence
groups=$(id -nG vigil 2> /dev/null)
if ((rc != 0)); then
  abort "dpkg -i exited $rc"
elif [[ " $groups " != *" video "* || " $groups " != *" render "* ]]; then
  abort "user vigil is missing or not in video and render (groups: '$groups')"
elif systemctl is-enabled -q vigil || systemctl is-active -q vigil; then
  fail "the package enabled or started the service before the user configured it"
else
  pass "installed $(dpkg-query -W -f '${Package} ${Version}' vigil); user vigil ($groups); service disabled, inactive"
fi

# ------------------------------------------------------------------------------------------
step no-model "without weights the service refuses to start and says how to fetch them"
t=$(date +%s)
timeout 150 systemctl start vigil > /dev/null 2>&1
rc=$?
sleep 1
vigil_journal "$t" err | tail -n 6 | evidence
if ((rc != 0)) && vigil_journal "$t" err | grep -q 'fetch-model'; then
  pass "systemctl start failed (exit $rc) with the fetch-model hint in the journal"
else
  fail "systemctl start exited $rc; expected a failure naming fetch-model in the journal"
fi
systemctl stop vigil > /dev/null 2>&1
systemctl reset-failed vigil > /dev/null 2>&1

# ------------------------------------------------------------------------------------------
step fetch-model "install the weights where the package documents (fetch-model.sh --from)"
out=$(/usr/share/vigil/fetch-model.sh --model /var/lib/vigil/models/yolox-nano \
  --from "$job/yolox_nano.onnx" 2>&1)
rc=$?
{
  echo "$out"
  ls -l /var/lib/vigil/models/yolox-nano
} | evidence
if ((rc == 0)); then pass "weights verified and installed"; else abort "fetch-model.sh exited $rc"; fi

# ------------------------------------------------------------------------------------------
step configure "edit /etc/vigil/cameras.yaml: the camera replays a clip (file source, looped)"
install -d -m 0755 /srv/vigil
install -m 0644 "$job/door.mp4" /srv/vigil/door.mp4
cp /etc/vigil/cameras.yaml /root/cameras.yaml.shipped
sed -i -e 's|^    source: /dev/video0$|    source: file:/srv/vigil/door.mp4|' \
  -e 's|^    loop: false$|    loop: true|' -e 's|^    name: front$|    name: door|' \
  /etc/vigil/cameras.yaml
cp /etc/vigil/cameras.yaml /root/cameras.yaml.good
diff -u /root/cameras.yaml.shipped /etc/vigil/cameras.yaml | evidence
# Under TCG the guest computes ~50 times slower than the host: the first inference did not end
# within 60 s here (0.13 s on the host). A stop cuts the inference in flight at the graph's next
# node (about 5 s here), but the unit's 15 s stop budget assumes real hardware, so the VM gives
# the service more time; everything else is the unit as shipped.
mkdir -p /etc/systemd/system/vigil.service.d
printf '[Service]\n# TCG: inference is ~50x slower than on real hardware\nTimeoutStopSec=90\n' \
  > /etc/systemd/system/vigil.service.d/tcg-slow-cpu.conf
systemctl daemon-reload
echo "drop-in for the slow emulated CPU: $(tr '\n' ' ' < /etc/systemd/system/vigil.service.d/tcg-slow-cpu.conf)" | evidence
out=$(runuser -u vigil -- vigil check-config /etc/vigil/cameras.yaml 2>&1)
rc=$?
echo "$out" | evidence
# The box's node name (default: the host name): its MQTT topics are vigil/<node>/...
node=$(echo "$out" | sed -n 's/^node: \([a-z0-9_-]*\).*/\1/p')
if ((rc == 0)) && [[ -n $node ]] && grep -q 'file:/srv/vigil/door.mp4' /etc/vigil/cameras.yaml; then
  pass "the edited file validates (vigil check-config as user vigil)"
else
  abort "vigil check-config exited $rc"
fi

# ------------------------------------------------------------------------------------------
step enable "systemctl enable --now vigil; the unit reaches active (READY=1)"
t=$(date +%s)
out=$(timeout 200 systemctl enable --now vigil 2>&1)
rc=$?
{
  echo "$out"
  systemctl status vigil --no-pager -n 0 2>&1 | sed -n '1,8p'
  vigil_journal "$t" | tail -n 12
} | evidence
pid=$(systemctl show -P MainPID vigil)
if ((rc == 0)) && systemctl is-active -q vigil && systemctl is-enabled -q vigil; then
  pass "active, enabled, MainPID $pid, status '$(systemctl show -P StatusText vigil)'"
else
  abort "systemctl enable --now exited $rc, state $(systemctl is-active vigil)"
fi

# ------------------------------------------------------------------------------------------
step security "systemd-analyze security vigil on the running unit: exposure 2.0 or lower"
report=$(systemd-analyze security --no-pager vigil 2>&1)
level=$(echo "$report" | sed -n 's/.*Overall exposure level for vigil.service: \([0-9.]*\).*/\1/p')
# The exposed settings with their weights, and the total.
echo "$report" | awk '/✗/ { print "✗", $2, $NF } /Overall exposure/' | evidence
if [[ -n $level ]] && awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }'; then
  pass "exposure $level"
else
  fail "exposure '${level:-none}' is above 2.0 or missing"
fi

# ------------------------------------------------------------------------------------------
step metrics "curl http://127.0.0.1:9842/metrics serves vigil_ metrics; MQTT status online"
metrics() { curl -sf --max-time 10 http://127.0.0.1:9842/metrics; }
wait_for 30 metrics
m=$(metrics)
rc=$?
status=$(mosquitto_sub -h 127.0.0.1 -t vigil/$node/status -C 1 -W 10 2>&1)
{
  echo "$m" | grep -E '^vigil_(build_info|frames_captured_total|inferences_total|camera_up)' | head -n 8
  echo "... $(echo "$m" | grep -c '^vigil_') vigil_ samples in all"
  echo "\$ mosquitto_sub -t vigil/$node/status -C 1: $status"
} | evidence
if ((rc == 0)) && echo "$m" | grep -q '^vigil_' && [[ $status == online ]]; then
  pass "$(echo "$m" | grep -c '^vigil_') vigil_ samples; vigil/$node/status = online"
else
  fail "curl exited $rc or no vigil_ metric, or vigil/$node/status is '$status'"
fi

# ------------------------------------------------------------------------------------------
step reload-bad "a broken cameras.yaml on reload: rejected, the service keeps running"
sed -i 's|^    fps: 10$|    fps: 0|' /etc/vigil/cameras.yaml
diff -u /root/cameras.yaml.good /etc/vigil/cameras.yaml | tail -n +3 | evidence
t=$(date +%s)
timeout 60 systemctl reload vigil
rc=$?
wait_for 30 sh -c "journalctl -u vigil --since @$t -p err | grep -q 'reload rejected'"
sleep 1
vigil_journal "$t" | tail -n 6 | evidence
pid_now=$(systemctl show -P MainPID vigil)
if ((rc == 0)) && systemctl is-active -q vigil && [[ $pid_now == "$pid" ]] &&
  vigil_journal "$t" err | grep -q 'reload rejected.*cameras.yaml:[0-9]*:[0-9]*: .*fps'; then
  pass "still active with MainPID $pid; the journal names the file, line and key at priority err"
else
  fail "reload exited $rc, state $(systemctl is-active vigil), MainPID $pid -> $pid_now, or no 'reload rejected ... cameras.yaml:L:C: ...fps' at err"
fi

# ------------------------------------------------------------------------------------------
step reload-good "a corrected cameras.yaml (detect_fps 2) on reload: applied in place"
sed 's|^    detect_fps: 5$|    detect_fps: 2|' /root/cameras.yaml.good > /etc/vigil/cameras.yaml
t=$(date +%s)
timeout 60 systemctl reload vigil
rc=$?
wait_for 30 sh -c "journalctl -u vigil --since @$t | grep -q 'reload applied'"
vigil_journal "$t" | tail -n 6 | evidence
pid_now=$(systemctl show -P MainPID vigil)
if ((rc == 0)) && systemctl is-active -q vigil && [[ $pid_now == "$pid" ]] &&
  vigil_journal "$t" | grep -q 'reload applied: 1 camera(s) restarted' && metrics > /dev/null; then
  pass "applied (camera door restarted), still MainPID $pid, /metrics answers"
else
  fail "reload exited $rc, state $(systemctl is-active vigil), MainPID $pid -> $pid_now, or no 'reload applied: 1 camera(s) restarted'"
fi

# ------------------------------------------------------------------------------------------
step stop "systemctl stop vigil: clean exit, offline retained on vigil/$node/status"
t=$(date +%s)
timeout 60 systemctl stop vigil
rc=$?
result=$(systemctl show -P Result vigil)
code=$(systemctl show -P ExecMainCode vigil) # 1 = exited (2 would be killed by a signal)
status_code=$(systemctl show -P ExecMainStatus vigil)
status=$(mosquitto_sub -h 127.0.0.1 -t vigil/$node/status -C 1 -W 10 -v 2>&1)
{
  vigil_journal "$t" | tail -n 10
  echo "Result=$result ExecMainCode=$code ExecMainStatus=$status_code"
  echo "\$ mosquitto_sub -t vigil/$node/status -C 1 -v (retained): $status"
} | evidence
if ((rc == 0)) && [[ $result == success && $code == 1 && $status_code == 0 &&
  $status == "vigil/$node/status offline" ]] && vigil_journal "$t" | grep -q 'stopped'; then
  pass "exit status 0, Result=success, 'offline' retained on vigil/$node/status"
else
  fail "stop exited $rc, Result=$result ExecMainCode=$code ExecMainStatus=$status_code, vigil/$node/status '$status'"
fi

# ------------------------------------------------------------------------------------------
step purge "apt-get purge vigil: user, group, /etc/vigil and /var/lib/vigil gone"
out=$(apt-get purge -y vigil 2>&1)
rc=$?
left=()
getent passwd vigil > /dev/null && left+=("user vigil")
getent group vigil > /dev/null && left+=("group vigil")
rm -rf /etc/systemd/system/vigil.service.d # the test's own drop-in (configure step)
for p in /etc/vigil /var/lib/vigil /usr/bin/vigil /lib/systemd/system/vigil.service \
  /etc/systemd/system/multi-user.target.wants/vigil.service; do
  [[ -e $p || -L $p ]] && left+=("$p")
done
dpkg -s vigil > /dev/null 2>&1 && left+=("dpkg still knows vigil")
{
  echo "$out" | grep -v -e '^Reading' -e '^Building' -e 'Reading database' | tail -n 8
  echo "left behind: ${left[*]:-nothing}"
} | evidence
if ((rc == 0 && ${#left[@]} == 0)); then
  pass "purged; nothing left behind"
else
  fail "apt-get purge exited $rc; left behind: ${left[*]:-nothing}"
fi

echo
echo "@@JOURNEY_SUMMARY failures=$failures uptime=$(up)"
exit "$failures"
