// The errno table behind js::MakeSystem (js_error.h): one for the whole addon.
#include "js_error.h"

namespace pinclaw {
namespace js {

// The names Node gives these errnos (strerrorname_np would need glibc 2.32, newer than some boards).
const char* ErrnoName(int err) {
  switch (err) {
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EINTR: return "EINTR";
    case EIO: return "EIO";
    case ENXIO: return "ENXIO";
    case EBADF: return "EBADF";
    case EAGAIN: return "EAGAIN";
    case ENOMEM: return "ENOMEM";
    case EACCES: return "EACCES";
    case EFAULT: return "EFAULT";
    case EBUSY: return "EBUSY";
    case ENODEV: return "ENODEV";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    case EINVAL: return "EINVAL";
    case ENFILE: return "ENFILE";
    case EMFILE: return "EMFILE";
    case ENOTTY: return "ENOTTY";
    case EROFS: return "EROFS";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case ENOSYS: return "ENOSYS";
    case ELOOP: return "ELOOP";
    case EPROTO: return "EPROTO";
    case EBADMSG: return "EBADMSG";
    case EOVERFLOW: return "EOVERFLOW";
    case EMSGSIZE: return "EMSGSIZE";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case ESHUTDOWN: return "ESHUTDOWN";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EREMOTEIO: return "EREMOTEIO";
    case ESRCH: return "ESRCH";
    case EEXIST: return "EEXIST";
    case ENOSPC: return "ENOSPC";
    case EPIPE: return "EPIPE";
    case ECONNREFUSED: return "ECONNREFUSED";
    case EXDEV: return "EXDEV";
    default: return "EUNKNOWN";
  }
}

}  // namespace js
}  // namespace pinclaw
