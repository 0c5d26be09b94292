// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

interface IUniswapV2PairReserves {
    function getReserves() external view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast);
}

interface IUniswapV3PoolState {
    function slot0()
        external
        view
        returns (uint160 sqrtPriceX96, int24 tick, uint16, uint16, uint16, uint8, bool);
    function liquidity() external view returns (uint128);
}

/// @notice Reads the state of many pools in one eth_call, for the market simulator. It is never
/// deployed: the simulator sends its creation code to eth_call without a `to` ("deployless"),
/// the constructor makes the reads and returns their results in place of the runtime code.
/// One call instead of dozens keeps the simulator's per-block round trip short.
contract DevnetPoolReader {
    /// @dev Returns the ABI encoding of (uint256[] words, bytes[] results): two words per V2 pair
    /// (reserve0, reserve1), two per V3 pool (sqrtPriceX96, liquidity), then the raw result of each
    /// extra call (empty when it reverted).
    constructor(address[] memory v2Pairs, address[] memory v3Pools, address[] memory targets, bytes[] memory calls) {
        uint256[] memory words = new uint256[](2 * (v2Pairs.length + v3Pools.length));
        uint256 k = 0;
        for (uint256 i = 0; i < v2Pairs.length; i++) {
            (uint112 reserve0, uint112 reserve1, ) = IUniswapV2PairReserves(v2Pairs[i]).getReserves();
            words[k++] = reserve0;
            words[k++] = reserve1;
        }
        for (uint256 i = 0; i < v3Pools.length; i++) {
            (uint160 sqrtPriceX96, , , , , , ) = IUniswapV3PoolState(v3Pools[i]).slot0();
            words[k++] = sqrtPriceX96;
            words[k++] = IUniswapV3PoolState(v3Pools[i]).liquidity();
        }
        bytes[] memory results = new bytes[](targets.length);
        for (uint256 i = 0; i < targets.length; i++) {
            (bool ok, bytes memory result) = targets[i].staticcall(calls[i]);
            results[i] = ok ? result : bytes("");
        }
        bytes memory encoded = abi.encode(words, results);
        assembly {
            return(add(encoded, 32), mload(encoded))
        }
    }
}
