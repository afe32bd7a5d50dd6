cmake_minimum_required(VERSION 3.16)
# The console's own work never runs on Qt's global pool (core/async/fileworkpool.h): Qt 6.4's
# raster engine splits a paint's larger fills across that pool and the GUI thread waits for
# them, so a file read queued there would hold up the window's paint. A file under the given
# folders may not call QThreadPool::globalInstance(), nor any QtConcurrent function (run, map,
# mapped, filtered, task...) whose first argument does not name a pool: a pool is spelled with
# "pool" in its name (fileWorkPool(), m_pool.get()), so a lambda, a function (&f) or a sequence
# as the first argument (on the call's line, or on the next when the line ends the call's
# parenthesis open) means Qt's global pool. Fails naming each
# offending line.
# Run as a test: cmake -DSOURCE_DIRS=<dir|dir|...> -P <this file>.
if(NOT SOURCE_DIRS)
    message(FATAL_ERROR "SOURCE_DIRS is empty")
endif()
string(REPLACE "|" ";" dirs "${SOURCE_DIRS}")
set(offences "")
set(count 0)
foreach(dir IN LISTS dirs)
    if(NOT IS_DIRECTORY "${dir}")
        message(FATAL_ERROR "not a directory: '${dir}'")
    endif()
    file(GLOB_RECURSE sources "${dir}/*.h" "${dir}/*.cpp")
    foreach(source IN LISTS sources)
        math(EXPR count "${count} + 1")
        file(STRINGS "${source}" lines)
        set(opened "") # a call whose first argument is on the next line (as clang-format puts it)
        foreach(line IN LISTS lines)
            # The code without its comments: a comment may name the pool to explain.
            string(REGEX REPLACE "//.*$" "" code "${line}")
            set(offence OFF)
            if(opened)
                string(REGEX MATCH "^[ \t]*([^,)]*)" first "${code}")
                if(NOT CMAKE_MATCH_1 MATCHES "[Pp]ool")
                    string(APPEND offences "\n  ${source}: ${opened}")
                endif()
                set(opened "")
            endif()
            if(code MATCHES "QThreadPool::globalInstance[ \t]*\\(")
                set(offence ON)
            elseif(code MATCHES "QtConcurrent::[A-Za-z]+[ \t]*\\([ \t]*$")
                set(opened "${line}")
            elseif(code MATCHES "QtConcurrent::[A-Za-z]+[ \t]*\\(([^,)]*)")
                # The first argument, up to its first comma or closing parenthesis.
                if(NOT CMAKE_MATCH_1 MATCHES "[Pp]ool")
                    set(offence ON)
                endif()
            endif()
            if(offence)
                string(APPEND offences "\n  ${source}: ${line}")
            endif()
        endforeach()
    endforeach()
endforeach()
if(count EQUAL 0)
    message(FATAL_ERROR "no sources found under ${SOURCE_DIRS}")
endif()
if(offences)
    message(FATAL_ERROR "work put on Qt's global pool (use fileWorkPool() or a pool of its own):${offences}")
endif()
message(STATUS "${count} files, none puts work on Qt's global pool")
