# Groups psql output into one line per operation: a line `@op NAME` starts operation NAME; the
# lines up to the next one become its value, joined with " ¶ ". psql's error prefix
# (`psql:FILE:LINE: ERROR:  XXXXX`) becomes `ERROR XXXXX`; PIDs in notifications become N.
function flush() {
  if (op != "") print op "\t" (value == "" ? "(no output)" : value)
  value = ""
}
/^@op / { flush(); op = $2; next }
/^@/ { print; next }
{
  line = $0
  sub(/^psql:[^:]*:[0-9]+: /, "", line)
  if (line ~ /^(ERROR|WARNING|NOTICE|FATAL):  [0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z][0-9A-Z]$/) { split(line, f, ":  "); line = f[1] " " f[2] }
  gsub(/server process with PID [0-9]+/, "server process with PID N", line)
  sub(/[ \t]+$/, "", line)
  if (line == "") next
  value = (value == "" ? line : value " ¶ " line)
}
END { flush() }
