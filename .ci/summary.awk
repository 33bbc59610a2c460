# Reads the output of `npm test` (bun test, run twice: the whole suite, then a subset on etcd) and
# prints the skipped tests by file, then one closing line "tests: N passed, M failed, K skipped".
# The counts are the sums of bun's summary lines (" N pass", " N fail", " N skip"; todo tests,
# which do not run either, count as skipped). Exits 1 when a test failed or none passed.
#   awk -f .ci/summary.awk test.log
# A new bun test run, or a file's section ("::group::" prefixed under GitHub Actions).
/^bun test v/ { file = ""; recap = 0; next }
/^(::group::)?[^ ()].*\.(test|spec)\.[cm]?[jt]sx?:$/ {
  file = $0
  sub(/^::group::/, "", file)
  sub(/:$/, "", file)
  recap = 0
  next
}
# After a run of several files bun repeats the skipped and failed tests ("12 tests skipped:"):
# those are already listed under their file.
/^[0-9]+ tests? (skipped|failed|todo):$/ { recap = 1; next }
/^\((skip|todo)\) / {
  if (!recap) {
    name = $0
    if (name ~ /^\(skip\) /) sub(/^\(skip\) /, "", name)
    names[++listed] = (file == "" ? "" : file ": ") name
  }
  next
}
/^ *[0-9]+ pass$/ { passed += $1 }
/^ *[0-9]+ fail$/ { failed += $1 }
/^ *[0-9]+ (skip|todo)$/ { skipped += $1 }
END {
  if (listed > 0) {
    print ""
    print "skipped tests (" listed "):"
    for (i = 1; i <= listed; i++) print "  " names[i]
  }
  print ""
  printf "tests: %d passed, %d failed, %d skipped\n", passed, failed, skipped
  exit (failed > 0 || passed == 0) ? 1 : 0
}
