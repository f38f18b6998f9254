import Foundation
import HybridInferenceCore

/// The library's SHA-256 (the one a download runs while it writes), through
/// OpenSSL and in Swift, beside `sha256sum` and `openssl dgst -sha256` on the
/// same bytes: the same digest from all, and each one's rate.
///
/// Ours hashes in memory, in 1 MiB updates, as a download hands it buffers;
/// the tools read a file of the same bytes that was just written (in the page
/// cache, so the read costs little beside the hash). Each is timed `runs`
/// times, interleaved, and the median rate printed. `openssl` uses the CPU's
/// SHA instructions where it has them, so it is the hardware bound;
/// `sha256sum` (coreutils) is portable C, the software one.
enum SHA256Throughput {
  static func run(mebibytes: Int, runs: Int = 3) throws {
    let chunkSize = 1 << 20
    var chunk = [UInt8](repeating: 0, count: chunkSize)
    var seed: UInt64 = 0x9e37_79b9_7f4a_7c15
    for index in chunk.indices {
      seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      chunk[index] = UInt8(truncatingIfNeeded: seed >> 56)
    }
    // Chunk `index` is `chunk` with its index in its first 8 bytes, so that no
    // two are alike.
    func stamp(_ index: Int) {
      withUnsafeBytes(of: UInt64(index).littleEndian) { bytes in
        for offset in 0..<8 { chunk[offset] = bytes[offset] }
      }
    }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sha256-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("bytes")
    _ = FileManager.default.createFile(atPath: file.path, contents: nil)
    let handle = try FileHandle(forWritingTo: file)
    for index in 0..<mebibytes {
      stamp(index)
      try handle.write(contentsOf: chunk)
    }
    try handle.close()

    // The stamping is timed with the hash in both of ours: it is the same
    // small cost in each, like a download's copy into its buffer.
    func ours(_ implementation: SHA256.Implementation) -> (digest: String, seconds: Double) {
      let start = ContinuousClock.now
      var hash = SHA256(implementation: implementation)
      for index in 0..<mebibytes {
        stamp(index)
        chunk.withUnsafeBytes { hash.update($0) }
      }
      let digest = hash.hexDigest
      return (digest, (ContinuousClock.now - start).seconds)
    }

    let megabytes = Double(mebibytes * chunkSize) / 1e6
    let hasOpenSSL = SHA256(implementation: .openSSL).implementation == .openSSL
    var (fast, portable, coreutils, openssl) = ([Double](), [Double](), [Double](), [Double]())
    var digests = (fast: "", portable: "", coreutils: "", openssl: "")
    for _ in 0..<runs {
      if hasOpenSSL {
        let (digest, seconds) = ours(.openSSL)
        digests.fast = digest
        fast.append(megabytes / seconds)
      }
      let (portableDigest, portableSeconds) = ours(.portable)
      digests.portable = portableDigest
      portable.append(megabytes / portableSeconds)
      let (coreutilsDigest, coreutilsSeconds) = try tool("sha256sum", [file.path])
      digests.coreutils = coreutilsDigest
      coreutils.append(megabytes / coreutilsSeconds)
      let (opensslDigest, opensslSeconds) = try tool("openssl", ["dgst", "-sha256", "-r", file.path])
      digests.openssl = opensslDigest
      openssl.append(megabytes / opensslSeconds)
    }
    let same =
      digests.portable == digests.coreutils && digests.portable == digests.openssl
      && (!hasOpenSSL || digests.fast == digests.portable)
    let fastText =
      hasOpenSSL
      ? "SHA256 .openSSL \(format(median(fast))) MB/s (ours / openssl dgst \(format(median(fast) / median(openssl), 3))), "
      : "SHA256 .openSSL unavailable in this process, "
    print(
      "SHA-256 of \(mebibytes) MiB on \(StreamedDecode.cpuModel), median of \(runs), 1 MiB updates: " + fastText
        + "SHA256 .portable \(format(median(portable))) MB/s (ours / sha256sum "
        + "\(format(median(portable) / median(coreutils), 3))), sha256sum \(format(median(coreutils))) MB/s, "
        + "openssl dgst \(format(median(openssl))) MB/s; same digest: \(same) (\(digests.portable))")
    guard same else {
      throw BenchmarkError(
        "digests differ: .openSSL \(digests.fast), .portable \(digests.portable), sha256sum \(digests.coreutils), "
          + "openssl \(digests.openssl)")
    }
  }

  /// The first word `executable` prints (the digest) and the seconds it ran.
  private static func tool(_ executable: String, _ arguments: [String]) throws -> (String, Double) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [executable] + arguments
    let output = Pipe()
    process.standardOutput = output
    let start = ContinuousClock.now
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let seconds = (ContinuousClock.now - start).seconds
    guard process.terminationStatus == 0 else {
      throw BenchmarkError("\(executable) exited with status \(process.terminationStatus)")
    }
    let digest = String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    return (digest, seconds)
  }
}
