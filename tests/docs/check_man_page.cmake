# docs.man-page: warden-inspect.1 renders with groff without a warning, and
# every option the program's --help names (--url, --json, ...) is in it, so the
# two texts do not drift apart. Run with -DMAN_PAGE=... -DINSPECT=... -P.
find_program(GROFF groff)
if(NOT GROFF)
  message(FATAL_ERROR "groff not found: install the Debian package groff-base (scripts/lib/deps.sh, task test)")
endif()

execute_process(COMMAND "${GROFF}" -man -Tutf8 -ww -z "${MAN_PAGE}"
  RESULT_VARIABLE rc ERROR_VARIABLE warnings)
if(NOT rc EQUAL 0 OR NOT warnings STREQUAL "")
  message(FATAL_ERROR "groff rendered ${MAN_PAGE} with status ${rc} and warnings:\n${warnings}")
endif()

# Plain text: -Tascii renders \- as -, and -P-cbou leaves out bold and underline.
execute_process(COMMAND "${GROFF}" -man -Tascii -P-cbou "${MAN_PAGE}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE page ERROR_VARIABLE error)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "groff failed on ${MAN_PAGE}: ${error}")
endif()
foreach(section NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES PERMISSIONS)
  string(FIND "${page}" "\n${section}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the man page has no ${section} section:\n${page}")
  endif()
endforeach()

execute_process(COMMAND "${INSPECT}" --help RESULT_VARIABLE rc OUTPUT_VARIABLE help)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "warden-inspect --help failed (${rc})")
endif()
string(REGEX MATCHALL "--[a-z][a-z-]*" options "${help}")
list(REMOVE_DUPLICATES options)
list(LENGTH options count)
if(count LESS 5)
  message(FATAL_ERROR "found only ${count} options in warden-inspect --help:\n${help}")
endif()
foreach(option IN LISTS options)
  string(FIND "${page}" "${option}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${option} is in warden-inspect --help but not in its man page ${MAN_PAGE}")
  endif()
endforeach()
message(STATUS "${MAN_PAGE}: no warnings; names all ${count} options of --help: ${options}")
