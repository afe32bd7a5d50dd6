# The Debian package, built by scripts/package.sh with CPack's DEB generator (docs/PACKAGING.md).
# Included only with AGENT_CONSOLE_DEB: it needs help2man and gzip, and adds what Debian's
# policy asks of a package beside the programs (manual pages, copyright, changelog).
find_program(HELP2MAN help2man REQUIRED)
find_program(GZIP gzip REQUIRED)
set(debian_dir ${CMAKE_CURRENT_LIST_DIR})
set(debian_out ${PROJECT_BINARY_DIR}/debian)
set(doc_dir ${CMAKE_INSTALL_DATADIR}/doc/agent-console)

set(AGENT_CONSOLE_DEB_MAINTAINER "Agent Console maintainers <agent-console@example.org>"
    CACHE STRING "The Maintainer field of the Debian package")

set(man_pages)
foreach(program IN ITEMS agent-console agent-cli)
    if(program STREQUAL "agent-console")
        set(summary "customer-support console that shows every tool call")
    else()
        set(summary "ask the support agent from a terminal or a script")
    endif()
    add_custom_command(OUTPUT ${debian_out}/${program}.1.gz
        COMMAND ${CMAKE_COMMAND} -E make_directory ${debian_out}
        COMMAND sh ${debian_dir}/manpage.sh $<TARGET_FILE:${program}> ${PROJECT_VERSION}
                "${summary}" ${debian_out}/${program}.1.gz
        DEPENDS ${program} ${debian_dir}/manpage.sh
        COMMENT "Manual page of ${program}" VERBATIM)
    list(APPEND man_pages ${debian_out}/${program}.1.gz)
endforeach()
add_custom_command(OUTPUT ${debian_out}/changelog.Debian.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${debian_out}
    COMMAND sh -c "gzip -n -9 -c \"$1\" > \"$2\"" sh ${debian_dir}/changelog
            ${debian_out}/changelog.Debian.gz
    DEPENDS ${debian_dir}/changelog VERBATIM)
add_custom_target(debian_docs ALL DEPENDS ${man_pages} ${debian_out}/changelog.Debian.gz)

install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${debian_dir}/copyright ${debian_out}/changelog.Debian.gz DESTINATION ${doc_dir})
install(FILES ${debian_dir}/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
    RENAME agent-console)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME agent-console)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The Agent Console authors")
set(CPACK_PACKAGE_CONTACT ${AGENT_CONSOLE_DEB_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${AGENT_CONSOLE_DEB_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "customer-support console that shows every tool call")
set(CPACK_PACKAGE_DESCRIPTION
"Support staff ask about orders, shipments and stock in a chat window, in
Chinese or English; an agent chooses the lookups, runs them with timeouts,
bounded retries and circuit breakers, and answers. Beside every answer, one
card per tool call shows its outcome and its attempts. After-sales tickets are
created only after confirmation and never twice.

It works offline out of the box (a built-in demo model and an embedded demo
store) and speaks to any OpenAI-compatible model server and a REST backend.
agent-cli runs the same agent without a window.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The libraries the programs link come from dpkg-shlibdeps; what Qt loads as a plugin at run
# time it cannot see: the SQLite driver (store, ledger, journal), the SVG plugins (the icon)
# and the platform plugins (xcb, wayland). PostgreSQL only for a shared ledger.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libqt6sql6-sqlite, libqt6svg6, qt6-qpa-plugins")
# Qt's own Chinese for its standard buttons and dialogs (docs/TRANSLATIONS.md); ours are
# built in.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "fonts-wqy-microhei, qt6-translations-l10n")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libqt6sql6-psql")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
include(CPack)
