// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice The token logic shared by the devnet's tokens: balances, allowances and minting by
/// the deployer. Each concrete token adds its own metadata (name, symbol, decimals), because the
/// way a token answers those calls is what the indexer has to cope with.
abstract contract DevnetERC20 {
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    address public immutable minter;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor() {
        minter = msg.sender;
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _transfer(msg.sender, to, amount);
        return true;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        // An unlimited allowance is not spent, like most deployed tokens (and WETH9) do.
        if (allowed != type(uint256).max) {
            require(allowed >= amount, "ERC20: insufficient allowance");
            allowance[from][msg.sender] = allowed - amount;
        }
        _transfer(from, to, amount);
        return true;
    }

    /// @notice Mints `amount` to `to`; only the deployer may mint.
    function mint(address to, uint256 amount) external {
        require(msg.sender == minter, "ERC20: not the minter");
        _mint(to, amount);
    }

    /// @notice Mints `amount` to each of `to` in one transaction (funding many wallets at once).
    function mintEach(address[] calldata to, uint256 amount) external {
        require(msg.sender == minter, "ERC20: not the minter");
        for (uint256 i = 0; i < to.length; i++) {
            _mint(to[i], amount);
        }
    }

    function _mint(address to, uint256 amount) private {
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function _transfer(address from, address to, uint256 amount) private {
        uint256 balance = balanceOf[from];
        require(balance >= amount, "ERC20: insufficient balance");
        balanceOf[from] = balance - amount;
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }
}
