cmake_minimum_required(VERSION 3.16)
# What the window may touch (docs/ARCHITECTURE.md, "The window's rule"): a file in ui/
# includes of core/ only the application rooms (turn/, console/, scenarios/, export/,
# history/, team/), never a mechanism room (resilience/, ledger/, llm/, mcp/, http/, faults/,
# support/, tools/, ...), and spells no tool name in its code: tool names and titles come from
# the descriptors at run time. The names looked for are read from where core keeps them
# (SUPPORT_TOOL_NAMES, core/support/supporttoolnames.h). Fails naming each offending line.
# Run as a test: cmake -DUI_DIR=<ui> -DSUPPORT_TOOL_NAMES=<header> -P <this file>.
if(NOT UI_DIR OR NOT IS_DIRECTORY "${UI_DIR}")
    message(FATAL_ERROR "UI_DIR is not a directory: '${UI_DIR}'")
endif()
if(NOT SUPPORT_TOOL_NAMES OR NOT EXISTS "${SUPPORT_TOOL_NAMES}")
    message(FATAL_ERROR "SUPPORT_TOOL_NAMES is not a file: '${SUPPORT_TOOL_NAMES}'")
endif()
set(application_rooms turn console scenarios export history team)

file(STRINGS "${SUPPORT_TOOL_NAMES}" name_lines REGEX "QLatin1String [A-Za-z]+{\"[A-Za-z_]+\"}")
set(tool_names "")
foreach(line IN LISTS name_lines)
    string(REGEX REPLACE ".*{\"([A-Za-z_]+)\"}.*" "\\1" name "${line}")
    list(APPEND tool_names "${name}")
endforeach()
list(LENGTH tool_names name_count)
if(name_count LESS 4)
    message(FATAL_ERROR "found ${name_count} tool names in ${SUPPORT_TOOL_NAMES}, expected 4 or more")
endif()

file(GLOB_RECURSE sources "${UI_DIR}/*.h" "${UI_DIR}/*.cpp")
list(LENGTH sources count)
if(count EQUAL 0)
    message(FATAL_ERROR "no sources found under ${UI_DIR}")
endif()
set(offences "")
foreach(source IN LISTS sources)
    file(RELATIVE_PATH name "${UI_DIR}/.." "${source}")
    file(STRINGS "${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]([./]*)core/")
    foreach(line IN LISTS includes)
        string(REGEX MATCH "core/([a-z_]+)/" room "${line}")
        set(room "${CMAKE_MATCH_1}")
        if(NOT room IN_LIST application_rooms)
            string(APPEND offences "\n  ${name}: ${line} (core/${room}/ is a mechanism room)")
        endif()
    endforeach()
    # The code without its comments: a comment may name a tool to explain, code may not.
    file(STRINGS "${source}" lines)
    foreach(line IN LISTS lines)
        string(REGEX REPLACE "//.*$" "" code "${line}")
        foreach(tool IN LISTS tool_names)
            if(code MATCHES "[^A-Za-z_]${tool}[^A-Za-z_]")
                string(APPEND offences "\n  ${name}: spells the tool name ${tool}: ${line}")
            endif()
        endforeach()
    endforeach()
endforeach()
if(offences)
    message(FATAL_ERROR "ui/ breaks the window's rule:${offences}")
endif()
message(STATUS "ui/: ${count} files include only application rooms of core/ and spell none of "
               "${name_count} tool names")
