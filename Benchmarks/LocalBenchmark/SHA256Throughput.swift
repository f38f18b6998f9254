import Foundation
import HybridInferenceCore

/// The library's SHA-256 (the one a download runs while it writes) beside
/// `sha256sum` and `openssl dgst -sha256` on the same bytes: the same digest
/// from all three, and each one's rate.
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

    let megabytes = Double(mebibytes * chunkSize) / 1e6
    var (ours, coreutils, openssl) = ([Double](), [Double](), [Double]())
    var digests = (ours: "", coreutils: "", openssl: "")
    for _ in 0..<runs {
      let start = ContinuousClock.now
      var hash = SHA256()
      for index in 0..<mebibytes {
        stamp(index)
        chunk.withUnsafeBytes { hash.update($0) }
      }
      digests.ours = hash.hexDigest
      ours.append(megabytes / (ContinuousClock.now - start).seconds)
      let (coreutilsDigest, coreutilsSeconds) = try tool("sha256sum", [file.path])
      digests.coreutils = coreutilsDigest
      coreutils.append(megabytes / coreutilsSeconds)
      let (opensslDigest, opensslSeconds) = try tool("openssl", ["dgst", "-sha256", "-r", file.path])
      digests.openssl = opensslDigest
      openssl.append(megabytes / opensslSeconds)
    }
    let same = digests.ours == digests.coreutils && digests.ours == digests.openssl
    print(
      "SHA-256 of \(mebibytes) MiB on \(StreamedDecode.cpuModel), median of \(runs): "
        + "SHA256 (1 MiB updates) \(format(median(ours))) MB/s, sha256sum \(format(median(coreutils))) MB/s, "
        + "openssl dgst \(format(median(openssl))) MB/s; ours / sha256sum \(format(median(ours) / median(coreutils), 3)), "
        + "ours / openssl \(format(median(ours) / median(openssl), 3)); same digest: \(same) (\(digests.ours))")
    guard same else {
      throw BenchmarkError(
        "digests differ: ours \(digests.ours), sha256sum \(digests.coreutils), openssl \(digests.openssl)")
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
