cmake_minimum_required(VERSION 3.16)
# The rooms that know no domain (docs/ARCHITECTURE.md): the loop (turn/), the history and every
# mechanism room but support/ itself include nothing of core/support/. A domain reaches them
# through what they define: its tools through the registry, its result codes and their rows
# through the one failure table (resilience/failuretable.h). Fails naming each offending line.
# Run as a test: cmake -DCORE_DIR=<core> -P <this file>.
if(NOT CORE_DIR OR NOT IS_DIRECTORY "${CORE_DIR}")
    message(FATAL_ERROR "CORE_DIR is not a directory: '${CORE_DIR}'")
endif()
set(rooms turn history async telemetry http resilience faults tools llm mcp oauth ledger)

set(count 0)
set(offences "")
foreach(room IN LISTS rooms)
    file(GLOB_RECURSE sources "${CORE_DIR}/${room}/*.h" "${CORE_DIR}/${room}/*.cpp")
    foreach(source IN LISTS sources)
        math(EXPR count "${count} + 1")
        file(RELATIVE_PATH name "${CORE_DIR}" "${source}")
        file(STRINGS "${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<][^\">]*support/")
        foreach(line IN LISTS includes)
            string(APPEND offences "\n  ${name}: ${line}")
        endforeach()
    endforeach()
endforeach()
if(count EQUAL 0)
    message(FATAL_ERROR "no sources found under ${CORE_DIR}")
endif()
if(offences)
    message(FATAL_ERROR "a room that knows no domain includes support/:${offences}")
endif()
message(STATUS "core/: ${count} files of the rooms without a domain include nothing of support/")
