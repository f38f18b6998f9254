import HybridInferenceCore
import HybridInferenceJinja

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A model file opened read-only, closed when this goes away.
final class OpenModelFile {
  let descriptor: Int32
  let identity: FileIdentity

  /// Opens `path`; the error is `errno`'s. Non-blocking, so that a named
  /// pipe at the path cannot stall the check until a writer comes.
  init(path: String) throws(OpenFailure) {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard descriptor >= 0 else { throw OpenFailure(code: errno) }
    guard let identity = FileIdentity.of(descriptor: descriptor) else {
      let code = errno
      close(descriptor)
      throw OpenFailure(code: code)
    }
    self.descriptor = descriptor
    self.identity = identity
  }

  deinit {
    close(descriptor)
  }

  /// A path that opens this same file, whatever the original path names by
  /// then: `/proc/self/fd/N` on Linux; elsewhere nil.
  var stablePath: String? {
    let path = "/proc/self/fd/\(descriptor)"
    return access(path, R_OK) == 0 ? path : nil
  }

  /// The file's bytes, mapped read-only for `body`.
  func withMappedBytes<T>(
    _ body: (UnsafeRawBufferPointer) throws(GGUFParser.Failure) -> T
  ) throws(GGUFParser.Failure) -> T {
    guard identity.size > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
    guard let mapped = mmap(nil, identity.size, PROT_READ, MAP_PRIVATE, descriptor, 0), mapped != MAP_FAILED else {
      throw GGUFParser.Failure(reason: "cannot be mapped (\(String(cString: strerror(errno))))")
    }
    defer { munmap(mapped, identity.size) }
    return try body(UnsafeRawBufferPointer(start: mapped, count: identity.size))
  }

  /// Why a file could not be opened.
  struct OpenFailure: Error {
    var code: Int32
    var reason: String { code == ENOENT ? "no such file" : "cannot be read (\(String(cString: strerror(code))))" }
  }
}
