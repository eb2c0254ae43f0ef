# parse_options PROGRAM "NAME..." "$@": for each `--some-name VALUE` of the arguments sets the
# shell variable some_name to VALUE, for the names listed only (set their defaults first); any
# other argument, or an option without its value, is "PROGRAM: unknown argument" and exit 2.
parse_options() {
  local program=$1 names=" $2 " key
  shift 2
  while (($#)); do
    key=${1#--}
    key=${key//-/_}
    if [[ $1 != --* || $names != *" $key "* || $# -lt 2 ]]; then
      echo "$program: unknown argument $1" >&2
      exit 2
    fi
    printf -v "$key" '%s' "$2"
    shift 2
  done
}
