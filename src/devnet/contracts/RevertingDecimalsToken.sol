// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import "./DevnetERC20.sol";

/// @notice A token whose decimals() reverts (decimals are optional in ERC-20): its amounts
/// cannot be scaled, so an honest indexer leaves its prices unknown.
contract RevertingDecimalsToken is DevnetERC20 {
    string public name;
    string public symbol;

    constructor(string memory name_, string memory symbol_) {
        name = name_;
        symbol = symbol_;
    }

    function decimals() external pure returns (uint8) {
        revert("decimals not supported");
    }
}
