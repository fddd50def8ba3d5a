/* How long the CUDA driver itself takes to start in a fresh process: cuInit,
 * then the primary context and a first allocation.  Build: gcc -O2
 * -I/usr/local/cuda/include cuda_init_probe.c -ldl (no link to the driver). */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(void){
  double t0=now(); void *h=dlopen("libcuda.so.1",RTLD_NOW); double t1=now();
  CUresult (*init)(unsigned)=dlsym(h,"cuInit"); CUresult (*get)(CUdevice*,int)=dlsym(h,"cuDeviceGet");
  CUresult (*retain)(CUcontext*,CUdevice)=dlsym(h,"cuDevicePrimaryCtxRetain"); CUresult (*cur)(CUcontext)=dlsym(h,"cuCtxSetCurrent");
  CUresult (*alloc)(CUdeviceptr*,size_t)=dlsym(h,"cuMemAlloc_v2");
  init(0); double t2=now(); CUdevice d; get(&d,0); CUcontext c; retain(&c,d); cur(c); CUdeviceptr p; alloc(&p,1<<20); double t3=now();
  printf("dlopen %.1f ms, cuInit %.1f ms, context + first alloc %.1f ms, total %.1f ms\n",t1-t0,t2-t1,t3-t2,t3-t0);
  return 0;}
