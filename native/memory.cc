// Giving memory back to the OS when the gateway goes idle (src/native/index.ts, src/idle.ts):
//   trimMemory()       glibc keeps freed blocks of its arenas mapped; malloc_trim(0) returns them.
//   limitMallocArenas  fewer arenas, so that what is freed can be returned (below).
//   trimFilePages()    drops the pages of read-only file mappings (the executable, the addons,
//                      shared libraries, the executable's assets) from this process's page tables.
// Why the second is safe: a page of a private file mapping that was never written is a copy of the
// file, which the kernel itself may take away at any time under memory pressure and fault back in
// on the next access; MADV_DONTNEED does the same now. Only pages that are still the file's are
// dropped: a page the process has written (a relocation before RELRO made it read-only, say) is
// anonymous now, and dropping it would lose the write, so /proc/self/pagemap is read first and such
// pages are skipped, as are writable and shared mappings as a whole. The pages stay in the page
// cache: what the process touches again costs a minor fault, not a read.
#include "addon.h"
#include "js_error.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

// The one use of V8's own API in this addon (everything else is N-API): N-API has no call that
// makes V8 give memory back. The two functions are declared here rather than taken from <v8.h>,
// whose Node 24 edition needs C++20 where this addon is C++17: both are exported by every Node
// binary under these names (nm -D), take no arguments and depend on no inline layout.
namespace v8 {
class Isolate {
 public:
  static Isolate* GetCurrent();
  void LowMemoryNotification();
};
}  // namespace v8

namespace pinclaw {

static Napi::Value TrimMemory(const Napi::CallbackInfo& info) {
#if defined(__GLIBC__)
  return Napi::Boolean::New(info.Env(), malloc_trim(0) != 0);
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}

// limitMallocArenas(n): at most n glibc arenas from now on (mallopt M_ARENA_MAX; MALLOC_ARENA_MAX
// does the same from the environment, before the first malloc). Each thread that meets a locked
// arena otherwise gets one of its own, up to 8 per core; V8's worker threads and the thread pool
// then leave freed blocks scattered over several arenas, which malloc_trim cannot return while a
// live block shares their pages. The limit binds threads that first allocate after the call: those
// Node started earlier keep their arenas (five thread arenas after 1,000 turns, malloc_stats), which
// is why one run's RssAnon after the idle release (+21 MiB with the default, +12 with the limit)
// did not repeat in the benchmark. Returns false where there is no glibc.
static Napi::Value LimitMallocArenas(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  REQUIRE_ARGUMENT_RANGE("limitMallocArenas(count: number >= 1)", 0, "count", count, 1, 2147483647, true, "an integer, 1 or more");
#if defined(__GLIBC__)
  return Napi::Boolean::New(env, mallopt(M_ARENA_MAX, static_cast<int>(count)) == 1);
#else
  return Napi::Boolean::New(env, false);
#endif
}

// fixMallocThresholds(bytes): glibc starts with a 128 KiB mmap threshold and raises it, for the
// life of the process, to the size of each larger mmapped block that is freed (up to 32 MiB), and
// its trim threshold to twice that. A thread's arena gives its free top back only when that top
// exceeds the trim threshold (malloc_trim returns the free pages inside every arena but the top of
// the main arena only), so after one large block has come and gone a thread arena keeps megabytes
// of freed memory resident for good. Measured after 1,000 turns and the idle release: one thread
// arena 6.5 MiB resident with 0.1 MB in use; malloc_stats "max mmap bytes = 15867904". Setting
// both thresholds (mallopt) switches the raising off. Returns false where there is no glibc.
static Napi::Value FixMallocThresholds(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  REQUIRE_ARGUMENT_RANGE("fixMallocThresholds(bytes: number from 4096 to 33554432)", 0, "bytes", value, 4096, 32 * 1024 * 1024, false, "from 4096 to 33554432");
#if defined(__GLIBC__)
  const int bytes = static_cast<int>(value);
  return Napi::Boolean::New(env, mallopt(M_MMAP_THRESHOLD, bytes) == 1 && mallopt(M_TRIM_THRESHOLD, bytes) == 1);
#else
  return Napi::Boolean::New(env, false);
#endif
}

// reduceHeap(): what V8 does when told the system is low on memory (Isolate::LowMemoryNotification):
// full collections until nothing more is freed, compacting the old generation, the young generation
// shrunk to its minimum, and the pages V8 keeps pooled for reuse unmapped. A plain full collection
// (gc()) does none of the last three: measured, after 1,000 fetch() calls and gc() plus
// malloc_trim the process kept +18.6 MiB RssAnon, after this call +9.4. Main thread only (the
// isolate of the calling thread); several full collections, so it runs once per idle period.
static Napi::Value ReduceHeap(const Napi::CallbackInfo& info) {
  v8::Isolate* isolate = v8::Isolate::GetCurrent();
  if (isolate == nullptr) return js::Throw(info.Env(), js::Kind::kState, "reduceHeap: no V8 isolate on this thread");
  isolate->LowMemoryNotification();
  return info.Env().Undefined();
}

namespace {

constexpr uint64_t kPresent = 1ULL << 63;
constexpr uint64_t kSwapped = 1ULL << 62;
constexpr uint64_t kFileOrShared = 1ULL << 61;

struct Mapping {
  uintptr_t start;
  uintptr_t end;
};

struct TrimResult {
  size_t mappings = 0;      // read-only private file mappings looked at
  size_t fileBytes = 0;     // their pages that were mapped and still the file's (dropped unless a dry run)
  size_t keptBytes = 0;     // their pages the process had written (anonymous): kept
  size_t ranges = 0;        // madvise calls
  std::string error;
  int err = 0;  // the errno behind `error`
};

// Read-only, private mappings of a file (an inode, a path that is not [vdso] and the like).
bool Candidates(std::vector<Mapping>* out, std::string* error, int* err) {
  FILE* f = std::fopen("/proc/self/maps", "re");
  if (!f) {
    *err = errno;
    *error = std::string("cannot read /proc/self/maps: ") + std::strerror(*err);
    return false;
  }
  char line[4096];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long start, end, offset, inode;
    char perms[8];
    unsigned dev_major, dev_minor;
    int path_at = 0;
    if (std::sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &offset, &dev_major, &dev_minor, &inode, &path_at) < 7) continue;
    if (inode == 0 || perms[1] == 'w' || perms[3] != 'p') continue;
    if (line[path_at] != '/') continue;
    out->push_back({static_cast<uintptr_t>(start), static_cast<uintptr_t>(end)});
  }
  std::fclose(f);
  return true;
}

TrimResult TrimFilePages(bool dry_run) {
  TrimResult r;
  const long page_size = sysconf(_SC_PAGESIZE);
  std::vector<Mapping> maps;
  if (!Candidates(&maps, &r.error, &r.err)) return r;
  int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap < 0) {
    r.err = errno;
    r.error = std::string("cannot read /proc/self/pagemap: ") + std::strerror(r.err);
    return r;
  }
  std::vector<uint64_t> entries;
  for (const Mapping& m : maps) {
    const size_t pages = (m.end - m.start) / page_size;
    entries.resize(pages);
    const off_t at = static_cast<off_t>(m.start / page_size) * static_cast<off_t>(sizeof(uint64_t));
    size_t got = 0;
    while (got < pages * sizeof(uint64_t)) {
      ssize_t n = pread(pagemap, reinterpret_cast<char*>(entries.data()) + got, pages * sizeof(uint64_t) - got, at + static_cast<off_t>(got));
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    // A mapping whose entries cannot all be read (it went away) is left alone.
    if (got != pages * sizeof(uint64_t)) continue;
    ++r.mappings;
    // Runs of pages that may be dropped: absent ones (nothing to drop, harmless to include) and
    // present pages of the file. A present anonymous page or a swapped one ends the run.
    size_t run_start = 0;
    size_t run_file = 0;
    auto flush = [&](size_t end_page) {
      if (run_file > 0) {
        if (dry_run || madvise(reinterpret_cast<void*>(m.start + run_start * page_size), (end_page - run_start) * page_size, MADV_DONTNEED) == 0) {
          r.fileBytes += run_file * page_size;
          ++r.ranges;
        }
      }
      run_file = 0;
    };
    for (size_t i = 0; i < pages; ++i) {
      const uint64_t e = entries[i];
      const bool written = (e & kSwapped) || ((e & kPresent) && !(e & kFileOrShared));
      if (written) {
        flush(i);
        r.keptBytes += page_size;
        run_start = i + 1;
      } else if (e & kPresent) {
        ++run_file;
      }
    }
    flush(pages);
  }
  close(pagemap);
  return r;
}

}  // namespace

// trimFilePages(dryRun?: boolean) → { mappings, fileBytes, keptBytes, ranges }; throws when /proc
// cannot be read.
static Napi::Value TrimFilePagesJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  OPTIONAL_ARGUMENT_BOOLEAN("trimFilePages(dryRun?: boolean)", 0, "dryRun", dry_run, false);
  TrimResult r = TrimFilePages(dry_run);
  if (!r.error.empty()) return js::ThrowSystem(env, "trimFilePages: " + r.error, r.err);
  Napi::Object out = Napi::Object::New(env);
  out.Set("mappings", Napi::Number::New(env, static_cast<double>(r.mappings)));
  out.Set("fileBytes", Napi::Number::New(env, static_cast<double>(r.fileBytes)));
  out.Set("keptBytes", Napi::Number::New(env, static_cast<double>(r.keptBytes)));
  out.Set("ranges", Napi::Number::New(env, static_cast<double>(r.ranges)));
  return out;
}

void InitMemory(Napi::Env env, Napi::Object exports) {
  exports.Set("trimMemory", Napi::Function::New(env, TrimMemory, "trimMemory"));
  exports.Set("limitMallocArenas", Napi::Function::New(env, LimitMallocArenas, "limitMallocArenas"));
  exports.Set("trimFilePages", Napi::Function::New(env, TrimFilePagesJs, "trimFilePages"));
  exports.Set("fixMallocThresholds", Napi::Function::New(env, FixMallocThresholds, "fixMallocThresholds"));
  exports.Set("reduceHeap", Napi::Function::New(env, ReduceHeap, "reduceHeap"));
}

}  // namespace pinclaw
