/* On a GPU machine: what pinned memory and the page cache cost on this host
 * (docs/benchmarks.md, "Pictures in memory of our own"): cuMemHostAlloc of a
 * tool run's pictures, luma read() from the page cache into reused pinned
 * pictures by 2 files x 1, 2, 4 threads, the upload from pinned memory, and
 * a file mapping registered with the driver (DMA straight from the page
 * cache).  The driver is opened with dlopen; no CUDA headers are needed.
 *
 *   gcc -O2 pinned_probe.c -o pinned_probe -ldl -lpthread
 *   ./pinned_probe RAW_420_FILE WIDTH HEIGHT FRAMES */
typedef int CUresult; typedef void *CUcontext; typedef int CUdevice; typedef unsigned long long CUdeviceptr;
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
#define F(name) static CUresult (*name)();
F(cuInit) F(cuDeviceGet) F(cuDevicePrimaryCtxRetain) F(cuCtxSetCurrent) F(cuMemHostAlloc) F(cuMemFreeHost)
F(cuMemHostRegister_v2) F(cuMemHostUnregister) F(cuMemAlloc_v2) F(cuMemcpyHtoD_v2) F(cuCtxSynchronize) F(cuMemcpyHtoDAsync_v2)
static CUcontext ctx;
typedef struct { const char *path; size_t frame, luma; int first, step, count; void **bufs; int nbuf; double t; } Job;
static void *reader(void *a){ Job *j=a; cuCtxSetCurrent(ctx); int fd=open(j->path,O_RDONLY); double t0=now();
  for(int k=0;k<j->count;k++){ long f=j->first+(long)k*j->step; if(pread(fd,j->bufs[k%j->nbuf],j->luma,f*(off_t)j->frame)!=(ssize_t)j->luma){perror("pread");break;} }
  j->t=now()-t0; close(fd); return NULL; }
int main(int argc,char**argv){
  if(argc<5){fprintf(stderr,"usage: pinned_probe FILE W H FRAMES\n");return 2;}
  const char*path=argv[1]; int w=atoi(argv[2]),h=atoi(argv[3]),frames=atoi(argv[4]);
  size_t luma=(size_t)w*h, frame=luma*3/2;
  void*lib=dlopen("libcuda.so.1",RTLD_NOW); if(!lib){puts("no libcuda");return 1;}
#define L(name) name=dlsym(lib,#name);
  L(cuInit) L(cuDeviceGet) L(cuDevicePrimaryCtxRetain) L(cuCtxSetCurrent) L(cuMemHostAlloc) L(cuMemFreeHost)
  L(cuMemHostRegister_v2) L(cuMemHostUnregister) L(cuMemAlloc_v2) L(cuMemcpyHtoD_v2) L(cuCtxSynchronize) L(cuMemcpyHtoDAsync_v2)
  cuInit(0); CUdevice d; cuDeviceGet(&d,0); cuDevicePrimaryCtxRetain(&ctx,d); cuCtxSetCurrent(ctx);
  enum{N=48}; void*b[N]; double t0=now();
  for(int i=0;i<N;i++) if(cuMemHostAlloc(&b[i],frame,0)){puts("alloc failed");return 1;}
  double t1=now();
  printf("%dx%d: cuMemHostAlloc of %d pictures of %.1f MB: %.1f ms (%.2f GB/s)\n",w,h,N,frame/1e6,(t1-t0)*1e3,N*frame/(t1-t0)/1e9);
  void *big; t0=now(); cuMemHostAlloc(&big,N*frame,0); t1=now();
  printf("  one slab of the same bytes: %.1f ms\n",(t1-t0)*1e3);
  t0=now(); memset(big,1,N*frame); t1=now(); printf("  memset of the slab (touched before? driver zeroes): %.1f ms (%.1f GB/s)\n",(t1-t0)*1e3,N*frame/(t1-t0)/1e9);
  cuMemFreeHost(big);
  /* readers: 2 files x L lanes, luma only, into the N pinned pictures */
  for(int lanes=1;lanes<=4;lanes*=2){
    pthread_t th[8]; Job jobs[8]; int nj=2*lanes; void*lb[8][N/8];
    for(int j=0;j<nj;j++){ for(int q=0;q<N/8;q++) lb[j][q]=b[(j*(N/8)+q)%N];
      jobs[j]=(Job){path,frame,luma,j%lanes,lanes,frames/lanes,lb[j],N/8,0}; }
    t0=now(); for(int j=0;j<nj;j++) pthread_create(&th[j],0,reader,&jobs[j]); for(int j=0;j<nj;j++) pthread_join(th[j],0); t1=now();
    printf("  read luma, 2 files x %d lanes into reused pinned pictures: %.0f frame pairs/s (%.1f GB/s)\n",lanes,frames/(t1-t0),2.0*frames*luma/(t1-t0)/1e9);
  }
  /* H2D from pinned */
  CUdeviceptr dv; cuMemAlloc_v2(&dv,frame); t0=now(); for(int i=0;i<200;i++) cuMemcpyHtoDAsync_v2(dv,b[i%N],luma,0); cuCtxSynchronize(); t1=now();
  printf("  H2D luma from pinned: %.1f GB/s\n",200.0*luma/(t1-t0)/1e9);
  /* the file mapped and registered */
  int fd=open(path,O_RDONLY); struct stat st; fstat(fd,&st); size_t len=st.st_size&~(size_t)4095;
  void*m=mmap(0,len,PROT_READ,MAP_SHARED|MAP_POPULATE,fd,0);
  t0=now(); CUresult r=cuMemHostRegister_v2(m,len,0x08 /*READ_ONLY*/); t1=now();
  printf("  register a %.2f GB file mapping (read-only): result %d, %.1f ms (%.1f GB/s)\n",len/1e9,(int)r,(t1-t0)*1e3,len/(t1-t0)/1e9);
  if(!r){ int n=frames; t0=now(); for(int i=0;i<n;i++) cuMemcpyHtoDAsync_v2(dv,(char*)m+(size_t)i*frame,luma,0); cuCtxSynchronize(); t1=now();
    printf("  H2D luma straight from the registered page cache: %.1f GB/s (%.0f frames/s of one file)\n",n*(double)luma/(t1-t0)/1e9,n/(t1-t0));
    t0=now(); cuMemHostUnregister(m); t1=now(); printf("  unregister: %.1f ms\n",(t1-t0)*1e3); }
  t0=now(); for(int i=0;i<N;i++) cuMemFreeHost(b[i]); t1=now(); printf("  cuMemFreeHost of the pictures: %.1f ms\n",(t1-t0)*1e3);
  return 0; }
