"""Task-blueprint generators: compose a domain's atomic intents into validated blueprints."""

from trajforge.generators.compose import (
    BlueprintCheck,
    blueprint_seed,
    generate_blueprints,
    validate_blueprint,
)

__all__ = ["BlueprintCheck", "blueprint_seed", "generate_blueprints", "validate_blueprint"]
