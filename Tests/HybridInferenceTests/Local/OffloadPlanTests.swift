import XCTest

@testable import HybridInferenceLlama

/// `GPUOffload` decided from injected facts: GPUs this machine does not
/// have, too small, just large enough, two of them, none.
final class OffloadPlanTests: XCTestCase {
  private let mib = 1 << 20
  private let gib = 1 << 30

  /// 32 blocks of 100 MiB, an output layer of 50 MiB, 320 MiB of KV cache
  /// (10 MiB a block), 200 MiB of compute buffer: 33 layers, 3,570 MiB in all.
  private func facts(_ devices: [ComputeDevice]) -> OffloadPlan.Facts {
    OffloadPlan.Facts(
      devices: devices, blockBytes: Array(repeating: 100 * mib, count: 32), outputBytes: 50 * mib,
      contextBytes: 320 * mib, computeBytes: 200 * mib)
  }

  private let cpu = ComputeDevice(
    name: "CPU", description: "a CPU", kind: .cpu, memoryBytes: 64 << 30, freeMemoryBytes: 32 << 30)

  private func gpu(_ name: String, free: Int?, kind: ComputeDevice.Kind = .gpu) -> ComputeDevice {
    ComputeDevice(name: name, description: "a GPU", kind: kind, memoryBytes: free, freeMemoryBytes: free)
  }

  /// Everything the model puts on a GPU, with llama.cpp's 1 GiB margin.
  private var everything: Int { 50 * mib + 32 * 110 * mib + 200 * mib + gib }

  func testACPUOnlyRegistry_leavesLlamaCppsDefaults() {
    for offload in [GPUOffload.automatic, .none, .layers(20)] {
      let plan = OffloadPlan.decide(offload, facts: facts([cpu]))
      XCTAssertEqual(plan.placement, .unchanged, "\(offload)")
      XCTAssertEqual(plan.layers, 0)
      XCTAssertEqual(plan.totalLayers, 33)
      XCTAssertEqual(OffloadDecision(plan).deviceName, "CPU")
    }
    XCTAssertEqual(OffloadPlan.decide(.automatic, facts: facts([])).placement, .unchanged, "an empty registry")
  }

  func testAutomatic_tooLittleFreeMemory_offloadsNothing() {
    let plan = OffloadPlan.decide(.automatic, facts: facts([cpu, gpu("CUDA0", free: gib + 200 * mib + 49 * mib)]))
    XCTAssertEqual(plan.placement, .cpu)
    XCTAssertEqual(plan.deviceBytes, 0)
    XCTAssertFalse(OffloadDecision(plan).isOffloaded)
  }

  func testAutomatic_justEnough_offloadsEveryLayer() {
    let plan = OffloadPlan.decide(.automatic, facts: facts([cpu, gpu("CUDA0", free: everything)]))
    XCTAssertEqual(plan.placement, .gpu(device: "CUDA0", layers: 33))
    XCTAssertEqual(plan.deviceWeightBytes, 50 * mib + 32 * 100 * mib)
    XCTAssertEqual(plan.deviceContextBytes, 320 * mib)
    XCTAssertEqual(plan.deviceBytes, everything - gib)
    XCTAssertTrue(plan.fitsDevice)
    let oneByteShort = OffloadPlan.decide(.automatic, facts: facts([cpu, gpu("CUDA0", free: everything - 1)]))
    XCTAssertEqual(oneByteShort.layers, 32, "the first block stays on the CPU")
  }

  func testAutomatic_partly_offloadsTheLastLayersThatFit() {
    // The output layer and 10 blocks of 110 MiB, and 50 MiB to spare.
    let free = gib + 200 * mib + 50 * mib + 10 * 110 * mib + 50 * mib
    let plan = OffloadPlan.decide(.automatic, facts: facts([cpu, gpu("Vulkan0", free: free)]))
    XCTAssertEqual(plan.placement, .gpu(device: "Vulkan0", layers: 11))
    XCTAssertEqual(plan.deviceWeightBytes, 50 * mib + 10 * 100 * mib)
    XCTAssertEqual(plan.deviceContextBytes, 10 * 10 * mib)
    XCTAssertEqual(OffloadDecision(plan).description, "11 of 33 layers on Vulkan0 (1350 MiB)")
  }

  func testTwoGPUs_theOneWithTheMostFreeMemoryIsChosen() {
    let small = gpu("CUDA0", free: 2 * gib)
    let large = gpu("CUDA1", free: 24 * gib)
    XCTAssertEqual(OffloadPlan.decide(.automatic, facts: facts([cpu, small, large])).deviceName, "CUDA1")
    XCTAssertEqual(OffloadPlan.decide(.automatic, facts: facts([cpu, large, small])).deviceName, "CUDA1")
    XCTAssertEqual(OffloadPlan.decide(.layers(4), facts: facts([cpu, small, large])).deviceName, "CUDA1")
    // A discrete GPU before an integrated one with more (shared) memory, as llama.cpp prefers.
    let integrated = gpu("Vulkan1", free: 48 * gib, kind: .integratedGPU)
    XCTAssertEqual(OffloadPlan.decide(.automatic, facts: facts([cpu, integrated, small])).deviceName, "CUDA0")
    XCTAssertEqual(OffloadPlan.decide(.automatic, facts: facts([cpu, integrated])).deviceName, "Vulkan1")
    // One that does not report its memory is not used.
    XCTAssertEqual(OffloadPlan.decide(.automatic, facts: facts([cpu, gpu("RPC0", free: nil)])).placement, .cpu)
  }

  func testNone_andLayers() {
    let devices = [cpu, gpu("CUDA0", free: 1 << 40)]
    XCTAssertEqual(OffloadPlan.decide(.none, facts: facts(devices)).placement, .cpu)
    XCTAssertEqual(OffloadPlan.decide(.layers(0), facts: facts(devices)).placement, .cpu)
    XCTAssertEqual(OffloadPlan.decide(.layers(20), facts: facts(devices)).placement, .gpu(device: "CUDA0", layers: 20))
    XCTAssertEqual(OffloadPlan.decide(.layers(99), facts: facts(devices)).layers, 33, "at most the layer count")
    // Forced past what fits: planned, but not counted as fitting.
    let forced = OffloadPlan.decide(.layers(33), facts: facts([cpu, gpu("CUDA0", free: gib)]))
    XCTAssertEqual(forced.layers, 33)
    XCTAssertFalse(forced.fitsDevice)
  }

  func testDescriptions() {
    XCTAssertEqual(GPUOffload.automatic.description, "automatic")
    XCTAssertEqual(GPUOffload.none.description, "none")
    XCTAssertEqual(GPUOffload.layers(20).description, "layers(20)")
    XCTAssertEqual(GPUOffload.layers(0), .none)
    XCTAssertEqual(ComputeDevice.Kind.integratedGPU.description, "integratedGPU")
  }

  /// Sums that would overflow saturate: a forged header is a model that fits nowhere.
  func testHugeSizes_doNotTrap() {
    let huge = OffloadPlan.Facts(
      devices: [cpu, gpu("CUDA0", free: Int.max)], blockBytes: [Int.max, Int.max], outputBytes: Int.max,
      contextBytes: Int.max, computeBytes: Int.max)
    XCTAssertEqual(OffloadPlan.decide(.automatic, facts: huge).placement, .cpu)
    XCTAssertEqual(OffloadPlan.decide(.layers(3), facts: huge).deviceBytes, Int.max)
    XCTAssertEqual(
      OffloadPlan.computeEstimate(batch: Int.max, window: 2, vocabulary: 2, heads: 2, embedding: 2), Int.max)
  }

  func testBlockNumbers_areReadOnlyFromBlockNames() {
    XCTAssertEqual(GGUFTensorBytes.blockNumber(of: "blk.0.attn_q.weight"), 0)
    XCTAssertEqual(GGUFTensorBytes.blockNumber(of: "blk.31.ffn_up.weight"), 31)
    for name in ["blk..x", "blk.99999.x", "blk.-1.x", "blk.1a.x", "output.weight", "token_embd.weight"] {
      XCTAssertNil(GGUFTensorBytes.blockNumber(of: name), name)
    }
    var bytes = GGUFTensorBytes()
    bytes.add(name: "token_embd.weight", bytes: 40)
    bytes.add(name: "output_norm.weight", bytes: 2)
    bytes.add(name: "blk.1.attn_q.weight", bytes: 5)
    bytes.add(name: "blk.1.ffn_up.weight", bytes: 7)
    XCTAssertEqual(bytes.blockBytes(count: 2), [0, 12])
    XCTAssertEqual(bytes.outputLayer, 42, "tied: the output layer copies the embeddings")
    bytes.add(name: "output.weight", bytes: 30)
    XCTAssertEqual(bytes.outputLayer, 32)
  }
}
