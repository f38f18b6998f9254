import Foundation
import GeminiServerProcess
import HybridInferenceCore
import HybridInferenceDownload

/// A model file from the loopback CDN (Tests/HubServer/hub_server.py):
/// `ModelDownload`, which hashes while it writes and syncs before it moves
/// the file into place, beside `curl -o` and beside `curl -o` followed by
/// `sha256sum` (what a script does), then a download cut at 40% and resumed.
///
/// The three are alternated round by round, so that each sees the same
/// minutes of a shared machine, and every one fetches a URL of its own (a
/// fresh repository on the server, a fresh store), so nothing is found in
/// place. Times are wall clock: a curl from its process's start to its exit,
/// ours from the call to its return. The resume check reads the server's
/// record of the two requests, and fails the step when the second did not
/// ask for, and receive, exactly the bytes the first left.
enum ModelDownloadBenchmark {
  static func run(modelPath: String, rounds: Int) async throws {
    let file = URL(fileURLWithPath: modelPath)
    let size = try FileManager.default.attributesOfItem(atPath: modelPath)[.size] as? Int ?? 0
    guard size > 0 else { throw BenchmarkError("\(modelPath) is empty or missing") }
    let sha256 = try digest(of: modelPath)
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("download-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    let server = try HubServerProcess(file: file, token: "bench")
    defer { server.stop() }
    let copy = work.appendingPathComponent("x")

    var (ours, curl, curlThenSum) = ([Double](), [Double](), [Double]())
    for round in 0..<rounds {
      let curlURL = try server.fileURL(name: "plain-curl-\(round)", filename: "model.gguf")
      curl.append(try timedCurl(curlURL, to: copy))
      try FileManager.default.removeItem(at: copy)

      let url = try server.fileURL(name: "plain-\(round)", filename: "model.gguf")
      let store = work.appendingPathComponent("store-\(round)")
      let download = ModelDownload(
        source: .url(url, sha256: sha256), store: ModelStore(directory: store), check: { _ in })
      let start = ContinuousClock.now
      let path = try await download.run(progress: { _ in })
      ours.append((ContinuousClock.now - start).seconds)
      guard fileSize(path) == size else { throw BenchmarkError("\(path) does not hold \(size) bytes") }
      try FileManager.default.removeItem(at: store)

      let sumURL = try server.fileURL(name: "plain-sum-\(round)", filename: "model.gguf")
      let sumStart = ContinuousClock.now
      _ = try timedCurl(sumURL, to: copy)
      let summed = try digest(of: copy.path)
      curlThenSum.append((ContinuousClock.now - sumStart).seconds)
      guard summed == sha256 else { throw BenchmarkError("curl's copy hashes to \(summed), not \(sha256)") }
      try FileManager.default.removeItem(at: copy)
    }

    let megabytes = Double(size) / 1e6
    let (oursMedian, curlMedian, sumMedian) = (median(ours), median(curl), median(curlThenSum))
    let implementation = SHA256.preferred == .openSSL ? ".openSSL (libcrypto's EVP)" : ".portable (Swift)"
    print(
      "model download of \(URL(fileURLWithPath: modelPath).lastPathComponent) (\(size) bytes) from a loopback CDN "
        + "on \(StreamedDecode.cpuModel), median of \(rounds): ModelDownload \(format(oursMedian * 1000)) ms "
        + "(\(format(megabytes / oursMedian)) MB/s), curl -o \(format(curlMedian * 1000)) ms "
        + "(\(format(megabytes / curlMedian)) MB/s); ours / curl \(format(oursMedian / curlMedian, 3)) "
        + "(goal <= 1.2); SHA-256 \(implementation), hashed while writing")
    print(
      "curl -o then sha256sum: \(format(sumMedian * 1000)) ms (\(format(megabytes / sumMedian)) MB/s); "
        + "ours / (curl + sha256sum) \(format(oursMedian / sumMedian, 3))")
    print(
      "runs (ms): ModelDownload \(ours.map { format($0 * 1000) }), curl -o \(curl.map { format($0 * 1000) }), "
        + "curl + sha256sum \(curlThenSum.map { format($0 * 1000) })")
    try await resume(server: server, size: size, sha256: sha256, work: work)
  }

  /// A `drop40` URL: the first run ends at 40% (the error is expected), the
  /// second asks for the rest and finishes; the server's record must show
  /// only the missing bytes moved.
  private static func resume(server: HubServerProcess, size: Int, sha256: String, work: URL) async throws {
    let name = "drop40-\(UUID().uuidString.lowercased())"
    let url = try server.fileURL(name: name, filename: "model.gguf")
    let download = ModelDownload(
      source: .url(url, sha256: sha256), store: ModelStore(directory: work.appendingPathComponent("resume")),
      check: { _ in })
    var cutShort = false
    do {
      _ = try await download.run(progress: { _ in })
    } catch {
      cutShort = true
    }
    guard cutShort else { throw BenchmarkError("the drop40 download finished on its first run") }
    let path = try await download.run(progress: { _ in })
    guard fileSize(path) == size else { throw BenchmarkError("the resumed file does not hold \(size) bytes") }
    let stats = try server.stats(repository: "files/\(name)")
    let gets = stats.cdnRequests.filter { $0.method == "GET" }
    let cut = size * 40 / 100
    let expected = "bytes=\(cut)-"
    let second = gets.count == 2 ? gets[1] : nil
    let exact =
      gets.count == 2 && gets[0].bytesSent == cut && second?.range == expected
      && second?.bytesSent == size - cut && stats.cdnBytesSent == size
    print(
      "resume after a cut at 40% (\(cut) bytes): \(gets.count) GETs; the second asked "
        + "\(second?.range ?? "no range") and was sent \(second?.bytesSent ?? 0) bytes (size - cut = \(size - cut)); "
        + "all requests \(stats.cdnBytesSent) bytes of \(size): \(exact ? "only the missing bytes moved" : "MISMATCH")")
    guard exact else {
      throw BenchmarkError(
        "the resume moved other bytes than the missing ones: \(gets.map { "\($0.range ?? "-") \($0.bytesSent)" })")
    }
  }

  /// Seconds `curl -s -o <to> <url>` ran, from its start to its exit.
  private static func timedCurl(_ url: URL, to destination: URL) throws -> Double {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["curl", "-s", "-f", "-o", destination.path, url.absoluteString]
    let start = ContinuousClock.now
    try process.run()
    process.waitUntilExit()
    let seconds = (ContinuousClock.now - start).seconds
    guard process.terminationStatus == 0 else {
      throw BenchmarkError("curl exited with status \(process.terminationStatus) for \(url)")
    }
    return seconds
  }

  /// `sha256sum`'s digest of `path`.
  private static func digest(of path: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sha256sum", path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw BenchmarkError("sha256sum exited with status \(process.terminationStatus)")
    }
    return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
  }

  private static func fileSize(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
  }
}
