/* For running the Windows build under Wine 8 (Debian 12's), in .ci/cross only: Rust's standard
 * library takes its random numbers from ProcessPrng in bcryptprimitives.dll (Windows 10 and
 * later), which Wine added only in 9.0. This stand-in exports that one function, over
 * RtlGenRandom (advapi32's SystemFunction036), which Wine 8 has. It is never shipped: the
 * release archive's program loads Windows' own DLL. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
