/* The floor of embedding: a C program that starts Debian's shared libpython3.11 as
 * apimacro does (PyConfig_InitPythonConfig, the program name), runs "pass" and finalizes.
 * What it costs over `python3 -c pass` (a non-PIE executable with libpython linked in,
 * no relocations to apply) is what any host of the shared library pays before doing
 * anything of its own. Built by Benchmarks/startup.py:
 *   cc -O2 embed_floor.c $(pkg-config --cflags --libs python3-embed)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

int main(int argc, char **argv) {
    (void)argc;
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, argv[0]);
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) Py_ExitStatusException(status);
    if (PyRun_SimpleString("pass") != 0) return 1;
    return Py_FinalizeEx() < 0 ? 1 : 0;
}
