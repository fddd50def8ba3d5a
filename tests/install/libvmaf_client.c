/* A program built on the installed libvmaf.so.3 through `pkg-config
 * libvmaf`, as FFmpeg's libvmaf filter includes it (tests/install_test.py):
 * prints vmaf_version(), which names quale. */
#include <libvmaf.h>
#include <stdio.h>

int main(void)
{
    printf("%s\n", vmaf_version());
    return 0;
}
