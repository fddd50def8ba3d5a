/* A program built on the installed libquale through `pkg-config quale`
 * (tests/install_test.py): prints the library's version, which the test
 * compares with the project's. */
#include <quale/quale.h>
#include <stdio.h>

int main(void)
{
    printf("%s\n", quale_version());
    return 0;
}
