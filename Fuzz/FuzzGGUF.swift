import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// libFuzzer target: the GGUF header check (issue 9, point 7), through its
/// entry point `GGUFFile.read(path:)`, the one the model store calls before
/// llama.cpp may see a file.
///
/// Each input is written to one file in memory-backed storage (`/dev/shm`
/// where it exists) and read back. A typed `.invalidModelFile` is the
/// expected outcome of garbage; a trap, an overflow or an ASan report is a
/// finding, and so is a header accepted with a tensor table outside the file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGGUF(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  // Finding (gguf, crash-da39a3ee, the empty input): Foundation's
  // `Data(contentsOf:)` leaks 4 KiB on every read of an empty file;
  // `GGUFFile.read` now checks the size first, so the empty input is fuzzed too.
  let data = Data(bytes: start, count: count)
  guard (try? data.write(to: FuzzGGUFFile.url)) != nil else { return 0 }
  if let file = try? GGUFFile.read(path: FuzzGGUFFile.url.path) {
    if file.fileSize != count { fatalError("fileSize \(file.fileSize) for a \(count)-byte file") }
    _ = file.kvBytesPerToken
    _ = file.name
    // The offload plan reads its sizes from the same header (tensor table,
    // block count, heads, vocabulary): its sums and products saturate.
    let model = LocalSystemModel(modelPath: FuzzGGUFFile.url.path)
    _ = OffloadPlan.decide(.automatic, facts: model.offloadFacts(for: file, devices: FuzzGGUFFile.devices))
    _ = model.requiredMemory(for: file, loaded: nil, devices: FuzzGGUFFile.devices)
  }
  return 0
}

/// Where the inputs are written: one file per process.
enum FuzzGGUFFile {
  static let url: URL = {
    let folder = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    return URL(fileURLWithPath: folder).appendingPathComponent("fuzz-gguf-\(getpid()).gguf")
  }()

  /// A CPU and a GPU with 8 GiB free, for the offload plan.
  static let devices = [
    ComputeDevice(name: "CPU", description: "", kind: .cpu, memoryBytes: 1 << 34, freeMemoryBytes: 1 << 33),
    ComputeDevice(name: "GPU0", description: "", kind: .gpu, memoryBytes: 1 << 34, freeMemoryBytes: 1 << 33),
  ]
}
